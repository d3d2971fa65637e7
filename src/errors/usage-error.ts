import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltUsageError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * The command line was wrong (unknown command, missing flag). The CLI prints
 * the message and the usage and exits with code 2.
 *
 * @example
 * ```ts
 * if (UsageError.isInstance(error)) process.exitCode = 2;
 * ```
 */
export class UsageError extends ToolbeltError {
  private readonly [symbol] = true;

  constructor({ message }: { message: string }) {
    super({ name, message });
  }

  static override isInstance(error: unknown): error is UsageError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
