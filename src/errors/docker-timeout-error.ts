import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltDockerTimeoutError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * A call to the Docker engine (or a Kubernetes cluster's API server, `kind: 'kubernetes'`) did
 * not answer in time (container start can hang under gVisor when the host is short of
 * resources; a pod may wait for a node). This is an infrastructure failure, distinct from user
 * code running too long (a `timeout` result).
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
  /** What kind of engine: `docker`, or `kubernetes` (its API server, or a pod's start). */
  readonly kind: 'docker' | 'kubernetes';

  constructor({
    operation,
    timeoutMs,
    engine,
    kind = 'docker',
  }: {
    operation: string;
    timeoutMs: number;
    engine?: string;
    kind?: 'docker' | 'kubernetes';
  }) {
    super({
      name,
      message:
        kind === 'docker'
          ? `Docker call \`${operation}\`${engine === undefined ? '' : ` to engine ${engine}`} did not finish within ${timeoutMs} ms. ` +
            'Check that dockerd is healthy (`docker info`) and the machine is not overloaded, ' +
            'or raise `dockerTimeoutMs`.'
          : `Kubernetes call \`${operation}\`${engine === undefined ? '' : ` to ${engine}`} did not finish within ${timeoutMs} ms. ` +
            'Check the API server and the nodes (`kubectl get nodes`, `kubectl get events -n NAMESPACE`), ' +
            'or raise `dockerTimeoutMs` (API calls) / `kubernetes.podStartTimeoutMs` (pod starts).',
    });
    this.operation = operation;
    this.timeoutMs = timeoutMs;
    this.engine = engine;
    this.kind = kind;
  }

  static override isInstance(error: unknown): error is DockerTimeoutError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
