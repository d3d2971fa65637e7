import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltInvalidArgumentError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * An argument or option had the wrong type or an out-of-range value. `argument`
 * names it (e.g. `topK`, `tools[3].name`).
 *
 * @example
 * ```ts
 * if (InvalidArgumentError.isInstance(error)) console.error(error.argument);
 * ```
 */
export class InvalidArgumentError extends ToolbeltError {
  private readonly [symbol] = true;
  /** The argument that was wrong, as a path such as `tools[3].description`. */
  readonly argument: string;
  /** The value that was passed. */
  readonly value: unknown;

  constructor({ argument, value, message }: { argument: string; value: unknown; message: string }) {
    super({ name, message: `Invalid argument \`${argument}\`: ${message}` });
    this.argument = argument;
    this.value = value;
  }

  static override isInstance(error: unknown): error is InvalidArgumentError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
