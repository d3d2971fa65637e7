import { withDeadline } from '../../util/with-deadline.ts';

/**
 * Waits for a store operation at most `timeoutMs` (then rejects with
 * `timeoutError()`) or until `abortSignal` fires (then with its reason). A
 * store client may queue commands while its server is down (ioredis does, for
 * seconds); the operation itself goes on, its result unused.
 */
export async function withStoreTimeout<T>({
  promise,
  timeoutMs,
  timeoutError,
  abortSignal,
}: {
  /** The store operation. */
  promise: Promise<T>;
  /** Longest wait. */
  timeoutMs: number;
  /** The error a timeout rejects with, naming the store and operation. */
  timeoutError: () => Error;
  /** Stops waiting with the signal's reason. */
  abortSignal?: AbortSignal | undefined;
}): Promise<T> {
  return withDeadline({ timeoutMs, abortSignal, run: () => promise, timeoutError });
}
