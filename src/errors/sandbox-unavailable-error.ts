import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltSandboxUnavailableError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * The sandbox cannot run code on this machine: the Docker engine is not
 * reachable, or the sandbox image is missing. The message says how to fix it.
 *
 * @example
 * ```ts
 * if (SandboxUnavailableError.isInstance(error)) console.error(error.message);
 * ```
 */
export class SandboxUnavailableError extends ToolbeltError {
  private readonly [symbol] = true;
  /** What is missing: the Docker engine or the image. */
  readonly reason: 'docker-unreachable' | 'image-missing';

  constructor({
    reason,
    message,
    cause,
  }: {
    reason: 'docker-unreachable' | 'image-missing';
    message: string;
    cause?: unknown;
  }) {
    super({ name, message, cause });
    this.reason = reason;
  }

  static override isInstance(error: unknown): error is SandboxUnavailableError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
