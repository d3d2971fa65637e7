const marker = 'ai-toolbelt.error';
const symbol = Symbol.for(marker);

/**
 * Base class of every error ai-toolbelt throws. Use the static `isInstance`
 * checks rather than `instanceof`: they keep working when two copies of the
 * package are loaded (common with bundlers and Next.js).
 *
 * @example
 * ```ts
 * try { await index.search(query) } catch (error) {
 *   if (ToolbeltError.isInstance(error)) console.error(error.name, error.message);
 * }
 * ```
 */
export class ToolbeltError extends Error {
  private readonly [symbol] = true;

  constructor({ name, message, cause }: { name: string; message: string; cause?: unknown }) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = name;
  }

  /** True for any ai-toolbelt error, across package copies. */
  static isInstance(error: unknown): error is ToolbeltError {
    return ToolbeltError.hasMarker(error, marker);
  }

  /** Checks a subclass marker; subclasses call this from their own `isInstance`. */
  protected static hasMarker(error: unknown, markerName: string): boolean {
    const markerSymbol = Symbol.for(markerName);
    return (
      error != null &&
      typeof error === 'object' &&
      markerSymbol in error &&
      (error as Record<symbol, unknown>)[markerSymbol] === true
    );
  }
}
