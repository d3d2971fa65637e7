import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltSandboxInsecureEngineError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * A Docker engine was given as plain `tcp://` (HTTP, no TLS): whoever can reach that port, or
 * sits on the network path, can start containers on the engine and read or rewrite every
 * run's code and output. The sandbox refuses it unless `allowInsecureTcp: true` is set. Use
 * mutual TLS (`{ url, certPath }`, or DOCKER_TLS_VERIFY=1 with DOCKER_CERT_PATH), `ssh://`
 * or `unix://` instead.
 *
 * @example
 * ```ts
 * if (SandboxInsecureEngineError.isInstance(error)) console.error(error.engine, error.argument);
 * ```
 */
export class SandboxInsecureEngineError extends ToolbeltError {
  private readonly [symbol] = true;
  /** The engine's address (no credentials), e.g. `tcp://10.0.0.5:2375`. */
  readonly engine: string;
  /** Where it was given: `engines[1]`, `docker`, or `DOCKER_HOST`. */
  readonly argument: string;

  constructor({ engine, argument }: { engine: string; argument: string }) {
    super({
      name,
      message:
        `The Docker engine ${engine} (${argument}) is reached over plain TCP without TLS: anyone ` +
        'on the network path could run containers on it and read or change every run. Use mutual ' +
        'TLS (`{ url, certPath }`, or DOCKER_TLS_VERIFY=1 with DOCKER_CERT_PATH), an ssh:// or ' +
        'unix:// address, or, on a network you fully trust, pass `allowInsecureTcp: true`.',
    });
    this.engine = engine;
    this.argument = argument;
  }

  static override isInstance(error: unknown): error is SandboxInsecureEngineError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
