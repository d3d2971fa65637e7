/**
 * Waits for `promise`, or rejects with the abort reason as soon as `abortSignal` aborts: for work
 * shared by several callers, which one caller's abort must not cancel.
 *
 * @example
 * ```ts
 * await abortable(sharedRebuild, abortSignal); // the rebuild goes on for the others
 * ```
 */
export async function abortable<T>(promise: Promise<T>, abortSignal?: AbortSignal): Promise<T> {
  if (abortSignal === undefined) return promise;
  abortSignal.throwIfAborted();
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortSignal.reason);
    abortSignal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    abortSignal.removeEventListener('abort', onAbort);
  }
}
