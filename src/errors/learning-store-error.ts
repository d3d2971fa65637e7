import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltLearningStoreError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * The store that shares learned tool usage (the same unstorage `Storage` as the
 * embeddings) failed or did not answer in time. Never thrown by `search` or
 * `learn`: learning goes on in memory and this is reported through
 * `learning.onEvent`; `cause` holds the store's own error.
 *
 * @example
 * ```ts
 * createToolIndex({ store, learning: { onEvent: event => {
 *   if (event.type === 'store-error') console.warn(event.error.message);
 * } } });
 * ```
 */
export class LearningStoreError extends ToolbeltError {
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
    super({ name, message: `Learning store ${operation} ${reason}: ${message}`, cause });
    this.operation = operation;
    this.reason = reason;
  }

  static override isInstance(error: unknown): error is LearningStoreError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
