/**
 * Runs `run` with a deadline (`AbortSignal.timeout`, combined with the caller's `abortSignal`
 * by `AbortSignal.any`) and answers at the deadline even if `run` ignores its signal: a hung
 * `runsc start`, a Redis client queueing commands while its server is down. At the deadline
 * it rejects with `timeoutError()`, on the caller's abort with the abort reason.
 *
 * @example
 * ```ts
 * const info = await withDeadline({
 *   timeoutMs: 15_000,
 *   run: abortSignal => container.inspect({ abortSignal }),
 *   timeoutError: () => new DockerTimeoutError({ operation: 'container inspect', timeoutMs: 15_000 }),
 * });
 * ```
 */
export async function withDeadline<T>({
  timeoutMs,
  abortSignal,
  run,
  timeoutError,
}: {
  /** Longest wait. */
  timeoutMs: number;
  /** Stops waiting early, rejecting with its reason. */
  abortSignal?: AbortSignal | undefined;
  /** The work; pass the signal on so it can stop too. */
  run: (abortSignal: AbortSignal) => Promise<T>;
  /** The error at the deadline. */
  timeoutError: () => unknown;
}): Promise<T> {
  abortSignal?.throwIfAborted();
  // AbortSignal.timeout throws on a fraction or a negative; callers pass what is left of a budget.
  const deadline = AbortSignal.timeout(Math.max(0, Math.ceil(timeoutMs)));
  const signal = abortSignal ? AbortSignal.any([deadline, abortSignal]) : deadline;
  let onAbort = () => {};
  const stopped = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortSignal?.aborted ? abortSignal.reason : timeoutError());
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([run(signal), stopped]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
