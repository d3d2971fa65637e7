import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltDimensionMismatchError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * A vector's length differs from the index's dimension, usually because the
 * embedding model changed without clearing the cache.
 *
 * @example
 * ```ts
 * if (DimensionMismatchError.isInstance(error)) console.error(error.expected, error.actual);
 * ```
 */
export class DimensionMismatchError extends ToolbeltError {
  private readonly [symbol] = true;
  /** The index's dimension. */
  readonly expected: number;
  /** The offending vector's length. */
  readonly actual: number;

  constructor({
    expected,
    actual,
    context,
  }: {
    expected: number;
    actual: number;
    context: string;
  }) {
    super({
      name,
      message:
        `Embedding dimensions differ (${context}): expected ${expected}, got ${actual}. ` +
        'Use one embedding model per index, and clear the embedding cache after changing models.',
    });
    this.expected = expected;
    this.actual = actual;
  }

  static override isInstance(error: unknown): error is DimensionMismatchError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
