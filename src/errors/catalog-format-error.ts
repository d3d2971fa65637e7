import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltCatalogFormatError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * A line of a JSONL catalog or query file is not what it should be. The
 * message names the file and the 1-based line.
 *
 * @example
 * ```ts
 * if (CatalogFormatError.isInstance(error)) console.error(`${error.file}:${error.line}`);
 * ```
 */
export class CatalogFormatError extends ToolbeltError {
  private readonly [symbol] = true;
  /** The file that was read. */
  readonly file: string;
  /** 1-based line number. */
  readonly line: number;

  constructor({
    file,
    line,
    message,
    cause,
  }: {
    file: string;
    line: number;
    message: string;
    cause?: unknown;
  }) {
    super({ name, message: `${file}:${line}: ${message}`, cause });
    this.file = file;
    this.line = line;
  }

  static override isInstance(error: unknown): error is CatalogFormatError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
