/**
 * Runs `work` after the work queued under `key` settles (whether it failed or not), so work
 * of one key runs one at a time in this process; the map forgets a key when its queue empties.
 *
 * @example
 * ```ts
 * const queues = new Map<string, Promise<unknown>>();
 * await inTurn({ queues, key: userId, work: () => placeInterpreter(userId) });
 * ```
 */
export function inTurn<T>({
  queues,
  key,
  work,
}: {
  /** The tails of the queues, by key (owned by the caller, shared by its calls). */
  queues: Map<string, Promise<unknown>>;
  /** Which queue. */
  key: string;
  /** What to run in turn. */
  work: () => Promise<T>;
}): Promise<T> {
  const result = (queues.get(key) ?? Promise.resolve()).then(work);
  const tail = result.catch(() => {});
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return result;
}
