import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltSandboxUnavailableError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * Why the sandbox could not run code:
 * - `docker-unreachable`: no answer from the Docker engine (not running, wrong address, down);
 * - `tls-refused`: the engine's TLS listener refused the client or its certificate (or the
 *   client spoke plain HTTP to it), or the engine's certificate could not be verified;
 * - `engine-lost`: the engine went away while a run or session was in flight on it; the
 *   run's outcome is unknown and it was not retried;
 * - `engine-error`: the engine answered a call with an error (`statusCode` says which);
 * - `image-missing`: the sandbox image is not on the engine;
 * - `no-engine`: none of several engines can run code (`cause` is an `AggregateError` of
 *   each engine's error);
 * - `interpreter-failed`: a conversation interpreter did not start (its supervisor or kernel
 *   failed before its first cell; the message quotes what it said);
 * - `cluster-unreachable`: no answer from a Kubernetes cluster's API server (wrong kubeconfig,
 *   down, the network);
 * - `forbidden`: the cluster refused a call this sandbox needs (RBAC: the message names the
 *   verb and resource to grant; or an admission policy refused the pod);
 * - `unsupported`: the engines cannot do what was asked (sessions need a Docker engine);
 * - `agent-sandbox-unavailable`: a Kubernetes engine with `agentSandbox` cannot use
 *   kubernetes-sigs/agent-sandbox: its CRDs are not installed, or its controller did not bind a
 *   SandboxClaim in time (not running); the message says which and what to do.
 *
 * @example
 * ```ts
 * const retryLater = (reason: SandboxUnavailableReason) => reason !== 'image-missing';
 * ```
 */
export type SandboxUnavailableReason =
  | 'docker-unreachable'
  | 'tls-refused'
  | 'engine-lost'
  | 'engine-error'
  | 'image-missing'
  | 'no-engine'
  | 'interpreter-failed'
  | 'cluster-unreachable'
  | 'forbidden'
  | 'unsupported'
  | 'agent-sandbox-unavailable';

/**
 * The sandbox cannot run code: a Docker engine or Kubernetes cluster is not reachable, refused
 * the TLS connection or a call, went away during a run, answered with an error, or lacks the
 * image.
 * `engine` names the engine (never with credentials), `cause` is the original error,
 * and the message says what to do.
 *
 * @example
 * ```ts
 * if (SandboxUnavailableError.isInstance(error)) console.error(error.reason, error.engine);
 * ```
 */
export class SandboxUnavailableError extends ToolbeltError {
  private readonly [symbol] = true;
  /** What went wrong; see `SandboxUnavailableReason`. */
  readonly reason: SandboxUnavailableReason;
  /** The engine's name (e.g. `tcp+tls://10.0.0.5:2376`), or several, comma-separated. */
  readonly engine: string | undefined;
  /** The engine's HTTP status, for `engine-error`. */
  readonly statusCode: number | undefined;

  constructor({
    reason,
    message,
    engine,
    statusCode,
    cause,
  }: {
    reason: SandboxUnavailableReason;
    message: string;
    engine?: string;
    statusCode?: number;
    cause?: unknown;
  }) {
    super({ name, message, cause });
    this.reason = reason;
    this.engine = engine;
    this.statusCode = statusCode;
  }

  static override isInstance(error: unknown): error is SandboxUnavailableError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
