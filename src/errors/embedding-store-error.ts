import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltEmbeddingStoreError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * The embedding store (Redis, a KV store, the cache file) failed or did not
 * answer in time. Never thrown by searches or upserts: it is reported through
 * `onCacheEvent` while the index embeds again, and `cause` holds the store's
 * own error.
 *
 * @example
 * ```ts
 * createToolIndex({ embeddingModel, store, onCacheEvent: event => {
 *   if (event.type === 'store-error') console.warn(event.error.message);
 * } });
 * ```
 */
export class EmbeddingStoreError extends ToolbeltError {
  private readonly [symbol] = true;
  /** What was attempted. */
  readonly operation: 'read' | 'write';
  /** `timeout` when the store did not answer within `timeoutMs`. */
  readonly reason: 'timeout' | 'failed';

  constructor({
    operation,
    reason,
    message,
    cause,
  }: {
    operation: 'read' | 'write';
    reason: 'timeout' | 'failed';
    message: string;
    cause?: unknown;
  }) {
    super({ name, message: `Embedding store ${operation} ${reason}: ${message}`, cause });
    this.operation = operation;
    this.reason = reason;
  }

  static override isInstance(error: unknown): error is EmbeddingStoreError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
