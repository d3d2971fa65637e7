import { withStoreTimeout } from './with-store-timeout.ts';

/** What went wrong with one store operation. */
export type StoreFailure = {
  operation: 'read' | 'write';
  reason: 'timeout' | 'failed';
  message: string;
  cause?: unknown;
};

/**
 * Runs store operations so that a store never fails the caller's request: each
 * waits at most `timeoutMs`; a failure or timeout becomes `onError(error)`
 * and `undefined`, and the store is left alone for `retryAfterMs`. An abort
 * of the caller's signal is the only thing that throws.
 *
 * @example
 * ```ts
 * const guarded = storeGuard({ backing, timeoutMs: 5_000, retryAfterMs: 30_000, toError, isError, onError });
 * const values = await guarded('read', b => b.read(keys), abortSignal); // undefined if the store failed
 * ```
 */
export function storeGuard<B, E extends Error>({
  backing,
  timeoutMs,
  retryAfterMs,
  toError,
  isError,
  onError,
}: {
  /** The store; undefined: every operation is skipped. */
  backing: B | undefined;
  /** Longest wait for one operation. */
  timeoutMs: number;
  /** After a failure, how long operations are skipped. */
  retryAfterMs: number;
  /** The typed error for a failure. */
  toError: (failure: StoreFailure) => E;
  /** Whether a thrown value is already that typed error. */
  isError: (error: unknown) => error is E;
  /** Reports a failure. */
  onError: (error: E) => void;
}): <T>(
  operation: 'read' | 'write',
  run: (backing: B) => Promise<T>,
  abortSignal?: AbortSignal,
) => Promise<T | undefined> {
  let skipUntil = 0;
  return async (operation, run, abortSignal) => {
    if (backing === undefined || Date.now() < skipUntil) return undefined;
    try {
      return await withStoreTimeout({
        promise: run(backing),
        timeoutMs,
        timeoutError: () =>
          toError({ operation, reason: 'timeout', message: `no answer within ${timeoutMs} ms` }),
        abortSignal,
      });
    } catch (cause) {
      if (abortSignal?.aborted) throw abortSignal.reason;
      skipUntil = Date.now() + retryAfterMs;
      onError(
        isError(cause)
          ? cause
          : toError({
              operation,
              reason: 'failed',
              message: cause instanceof Error ? cause.message : String(cause),
              cause,
            }),
      );
      return undefined;
    }
  };
}
