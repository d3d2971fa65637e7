import { DockerTimeoutError } from '../../errors/docker-timeout-error.ts';
import { SandboxUnavailableError } from '../../errors/sandbox-unavailable-error.ts';
import { ToolbeltError } from '../../errors/toolbelt-error.ts';

type ErrorLike = { code?: unknown; message?: unknown; body?: unknown; cause?: unknown };

// Node's and undici's codes for a connection that failed or broke.
const TRANSPORT = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CLOSED',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
]);

/** The HTTP status of an API server's answer (`ApiException.code`), if the error is one. */
export function statusOf(error: unknown): number | undefined {
  // Node's and undici's error codes are strings: a number is an answer's status.
  const { code } = (error ?? {}) as ErrorLike;
  return typeof code === 'number' ? code : undefined;
}

/** The API server's own message (its Status object's `message`), or the error's. */
export function detailOf(error: unknown): string {
  const { body, message } = (error ?? {}) as ErrorLike;
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
  }
  const status = (parsed ?? {}) as { message?: unknown };
  if (typeof status.message === 'string') return status.message;
  const text = typeof message === 'string' ? message : String(error);
  return text.split('\n')[0]!.trim();
}

/** True when the API server did not answer (refused, reset, TLS, DNS, a deadline). */
export function isKubeTransportError(error: unknown): boolean {
  if (DockerTimeoutError.isInstance(error)) return true;
  if (SandboxUnavailableError.isInstance(error)) {
    return error.reason === 'cluster-unreachable' || error.reason === 'engine-lost';
  }
  if (statusOf(error) !== undefined) return false;
  for (let cause: unknown = error, depth = 0; cause && depth < 4; depth++) {
    const { code, message } = cause as ErrorLike;
    if (typeof code === 'string' && TRANSPORT.has(code)) return true;
    if (
      typeof message === 'string' &&
      /fetch failed|socket hang up|other side closed/.test(message)
    )
      return true;
    cause = (cause as ErrorLike).cause;
  }
  return false;
}

/** True for "not there" (404), which removals and look-ups take as gone. */
export function isKubeGone(error: unknown): boolean {
  return statusOf(error) === 404;
}

/**
 * Turns a failure of a call to the cluster `engine` into the sandbox's error set, naming the
 * engine and keeping the original as `cause`: no answer becomes `cluster-unreachable` (or
 * `engine-lost` when `inFlight`), 401/403 `forbidden` with what to grant, other answers
 * `engine-error` with the status, a deadline a `DockerTimeoutError` of kind `kubernetes`.
 * Errors that are not the cluster's (abort reasons, the caller's own, typed ones) pass unchanged.
 *
 * @example
 * ```ts
 * throw toKubeError(error, { engine: 'kubernetes:sandbox', namespace: 'sandbox' });
 * ```
 */
export function toKubeError(
  error: unknown,
  {
    engine,
    namespace,
    inFlight = false,
  }: {
    /** The engine's name. */
    engine: string;
    /** Its namespace (named in the hints). */
    namespace: string;
    /** The failure hit a run that had reached its pod. */
    inFlight?: boolean;
  },
): unknown {
  if (DockerTimeoutError.isInstance(error)) {
    if (error.engine !== undefined) return error;
    const { operation, timeoutMs } = error;
    return new DockerTimeoutError({ operation, timeoutMs, engine, kind: 'kubernetes' });
  }
  if (SandboxUnavailableError.isInstance(error)) {
    if (error.engine !== undefined) return error;
    const { reason, message, statusCode, cause } = error;
    return new SandboxUnavailableError({ reason, message, engine, statusCode, cause });
  }
  if (ToolbeltError.isInstance(error)) return error;
  const status = statusOf(error);
  const detail = detailOf(error);
  if (status === 401 || status === 403) {
    return new SandboxUnavailableError({
      reason: 'forbidden',
      engine,
      statusCode: status,
      message:
        `The Kubernetes cluster ${engine} refused a call (${detail}). ` +
        (status === 401
          ? 'Its credentials were not accepted: check the kubeconfig (KUBECONFIG) or the service account token.'
          : `Grant the app's service account the Role of docs/deploy.md in namespace ${namespace} ` +
            '(pods: create, get, list, watch, delete, update; pods/attach: create, get; pods/log: get; ' +
            'leases: get, create, update), or fix the admission policy that refused the pod.'),
      cause: error,
    });
  }
  if (status !== undefined) {
    return new SandboxUnavailableError({
      reason: 'engine-error',
      engine,
      statusCode: status,
      message: `The Kubernetes cluster ${engine} answered with an error: ${detail}`,
      cause: error,
    });
  }
  if (!isKubeTransportError(error)) return error;
  if (inFlight) {
    return new SandboxUnavailableError({
      reason: 'engine-lost',
      engine,
      message:
        `The Kubernetes cluster ${engine} went away while the run was in flight (${detail}); ` +
        'its outcome is unknown and it was not retried.',
      cause: error,
    });
  }
  return new SandboxUnavailableError({
    reason: 'cluster-unreachable',
    engine,
    message:
      `Cannot reach the Kubernetes API server of ${engine} (${detail}). Check the kubeconfig ` +
      '(KUBECONFIG, its current context) and that the cluster is up (`kubectl get --raw /readyz`).',
    cause: error,
  });
}
