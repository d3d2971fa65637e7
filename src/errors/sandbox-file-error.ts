import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltSandboxFileError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * A file operation of a sandbox session failed inside the container: the path is a
 * directory (or not one), or the sandbox forbids it (only /tmp is writable).
 *
 * @example
 * ```ts
 * if (SandboxFileError.isInstance(error)) console.error(error.operation, error.path);
 * ```
 */
export class SandboxFileError extends ToolbeltError {
  private readonly [symbol] = true;
  /** `read`, `write`, `stat`, `list` or `delete`. */
  readonly operation: string;
  /** The absolute path inside the sandbox. */
  readonly path: string;

  constructor({ operation, path, message }: { operation: string; path: string; message: string }) {
    super({
      name,
      message:
        `Sandbox ${operation} of ${path} failed: ${message}. ` +
        'Only /tmp (the session directory) is writable in the sandbox.',
    });
    this.operation = operation;
    this.path = path;
  }

  static override isInstance(error: unknown): error is SandboxFileError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
