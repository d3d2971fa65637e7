import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltStoreError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * The key-value store the index shares (Redis, a KV store, the cache file) failed or did not
 * answer in time, for embeddings or for learned tool usage. Never thrown by `search`,
 * `upsert` or `learn`: the index goes on (embedding again, learning in memory) and reports it
 * through `onCacheEvent` or `learning.onEvent`; `cause` holds the store's own error.
 *
 * @example
 * ```ts
 * createToolIndex({ embeddingModel, store, onCacheEvent: event => {
 *   if (event.type === 'store-error') console.warn(event.error.records, event.error.message);
 * } });
 * ```
 */
export class StoreError extends ToolbeltError {
  private readonly [symbol] = true;
  /** Which records: tool embeddings, or learned tool usage. */
  readonly records: 'embeddings' | 'usage';
  /** What was attempted. */
  readonly operation: 'read' | 'write';
  /** `timeout` when the store did not answer within `timeoutMs`. */
  readonly reason: 'timeout' | 'failed';

  constructor({
    records,
    operation,
    reason,
    message,
    cause,
  }: {
    records: 'embeddings' | 'usage';
    operation: 'read' | 'write';
    reason: 'timeout' | 'failed';
    message: string;
    cause?: unknown;
  }) {
    const what = records === 'embeddings' ? 'Embedding' : 'Tool usage';
    super({ name, message: `${what} store ${operation} ${reason}: ${message}`, cause });
    this.records = records;
    this.operation = operation;
    this.reason = reason;
  }

  static override isInstance(error: unknown): error is StoreError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
