import { EmbeddingStoreError } from '../errors/embedding-store-error.ts';
import { withDeadline } from '../util/with-deadline.ts';

/**
 * Waits for a store operation at most `timeoutMs` (then an
 * {@link EmbeddingStoreError} with reason `timeout`) or until `abortSignal`
 * fires. A store client may queue commands while its server is down (ioredis
 * does, for seconds); the operation itself goes on, its result unused.
 */
export async function withStoreTimeout<T>({
  promise,
  timeoutMs,
  operation,
  abortSignal,
}: {
  /** The store operation. */
  promise: Promise<T>;
  /** Longest wait. */
  timeoutMs: number;
  /** Named in the timeout error. */
  operation: 'read' | 'write';
  /** Stops waiting with the signal's reason. */
  abortSignal?: AbortSignal | undefined;
}): Promise<T> {
  return withDeadline({
    timeoutMs,
    abortSignal,
    run: () => promise,
    timeoutError: () =>
      new EmbeddingStoreError({
        operation,
        reason: 'timeout',
        message: `no answer within ${timeoutMs} ms`,
      }),
  });
}
