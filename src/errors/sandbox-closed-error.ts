import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltSandboxClosedError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * The sandbox (or sandbox session) was used after `close()`. Create a new one.
 *
 * @example
 * ```ts
 * if (SandboxClosedError.isInstance(error)) sandbox = await DockerSandbox.create();
 * ```
 */
export class SandboxClosedError extends ToolbeltError {
  private readonly [symbol] = true;

  constructor({ what = 'sandbox' }: { what?: string } = {}) {
    super({ name, message: `The ${what} is closed; create a new one to run more code.` });
  }

  static override isInstance(error: unknown): error is SandboxClosedError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
