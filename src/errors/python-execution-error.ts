import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltPythonExecutionError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * The python tool's code failed (and was not, or could not be, repaired).
 * The AI SDK hands `String(error)` to the model as the tool error, so
 * `toString()` is the trimmed error alone: no "Error:" noise in the prompt.
 *
 * @example
 * ```ts
 * if (PythonExecutionError.isInstance(error)) console.log(error.status, error.attempts);
 * ```
 */
export class PythonExecutionError extends ToolbeltError {
  private readonly [symbol] = true;
  /** How the last run failed. */
  readonly status: string;
  /** Attempts made, the original included. */
  readonly attempts: number;
  /** The normalised error of the last run. */
  readonly fingerprint: string;

  constructor({
    message,
    status,
    attempts,
    fingerprint,
  }: {
    message: string;
    status: string;
    attempts: number;
    fingerprint: string;
  }) {
    super({ name, message });
    this.status = status;
    this.attempts = attempts;
    this.fingerprint = fingerprint;
  }

  override toString(): string {
    return this.message;
  }

  static override isInstance(error: unknown): error is PythonExecutionError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
