import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltCodeTooLargeError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * The code sent to the sandbox is larger than its `maxCodeBytes` limit.
 *
 * @example
 * ```ts
 * if (CodeTooLargeError.isInstance(error)) console.error(error.bytes, error.maxBytes);
 * ```
 */
export class CodeTooLargeError extends ToolbeltError {
  private readonly [symbol] = true;
  /** The code's size in UTF-8 bytes. */
  readonly bytes: number;
  /** The limit. */
  readonly maxBytes: number;

  constructor({ bytes, maxBytes }: { bytes: number; maxBytes: number }) {
    super({
      name,
      message:
        `The code is ${bytes} bytes, over the sandbox limit of ${maxBytes} bytes. ` +
        'Send smaller code (write data to files inside the code instead of inlining it) or raise `maxCodeBytes`.',
    });
    this.bytes = bytes;
    this.maxBytes = maxBytes;
  }

  static override isInstance(error: unknown): error is CodeTooLargeError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
