/**
 * Resolves on a later turn of the event loop, after pending I/O callbacks (`setImmediate`, or a
 * zero timeout where there is none, as on edge runtimes).
 *
 * @example
 * ```ts
 * await nextTurn(); // a store reply that arrived meanwhile has been handled
 * ```
 */
export function nextTurn(): Promise<void> {
  return new Promise(resolve =>
    typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0),
  );
}
