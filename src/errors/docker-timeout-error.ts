import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltDockerTimeoutError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * A call to the Docker engine did not answer in time (container start can hang
 * under gVisor when the host is short of resources). This is an infrastructure
 * failure, distinct from user code running too long (a `timeout` result).
 *
 * @example
 * ```ts
 * if (DockerTimeoutError.isInstance(error)) console.error(error.engine, error.operation, error.timeoutMs);
 * ```
 */
export class DockerTimeoutError extends ToolbeltError {
  private readonly [symbol] = true;
  /** The Docker call that timed out, e.g. `container start`. */
  readonly operation: string;
  /** The limit that was exceeded. */
  readonly timeoutMs: number;
  /** The engine that did not answer, when known. */
  readonly engine: string | undefined;

  constructor({
    operation,
    timeoutMs,
    engine,
  }: {
    operation: string;
    timeoutMs: number;
    engine?: string;
  }) {
    super({
      name,
      message:
        `Docker call \`${operation}\`${engine === undefined ? '' : ` to engine ${engine}`} did not finish within ${timeoutMs} ms. ` +
        'Check that dockerd is healthy (`docker info`) and the machine is not overloaded, ' +
        'or raise `dockerTimeoutMs`.',
    });
    this.operation = operation;
    this.timeoutMs = timeoutMs;
    this.engine = engine;
  }

  static override isInstance(error: unknown): error is DockerTimeoutError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
