import { DockerTimeoutError } from '../../errors/docker-timeout-error.ts';
import { SandboxUnavailableError } from '../../errors/sandbox-unavailable-error.ts';
import { ToolbeltError } from '../../errors/toolbelt-error.ts';

type ErrorLike = { code?: unknown; statusCode?: unknown; message?: unknown; json?: unknown };

// Node's codes when no connection could be made at all: the request never reached the engine.
const NOT_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOENT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EACCES',
]);
// The connection broke (or never completed) mid-way: the request may have reached the engine.
const BROKEN = new Set([
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ECONNABORTED',
  'ERR_STREAM_PREMATURE_CLOSE',
  'ERR_STREAM_DESTROYED',
  'UND_ERR_SOCKET',
]);
// Certificate verification failures (Node's X509 codes) and TLS alerts from the engine.
const TLS_CODE =
  /^(ERR_SSL_|ERR_TLS_)|CERT|SELF_SIGNED|^UNABLE_TO_|^INVALID_CA$|^INVALID_PURPOSE$|^HOSTNAME_MISMATCH$/;

function codeOf(error: unknown): string {
  const code = (error as ErrorLike | null)?.code;
  return typeof code === 'string' ? code : '';
}

function statusOf(error: unknown): number | undefined {
  const status = (error as ErrorLike | null)?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

function messageOf(error: unknown): string {
  const message = (error as ErrorLike | null)?.message;
  return typeof message === 'string' ? message.trim() : String(error);
}

/** True when the engine's TLS listener refused this client (or the client spoke plain HTTP to it). */
export function isTlsRefusal(error: unknown): boolean {
  if (TLS_CODE.test(codeOf(error))) return true;
  return statusOf(error) === 400 && /HTTP request to an HTTPS server/i.test(messageOf(error));
}

/** True when the request provably never reached the engine (nothing can have been created). */
export function neverConnected(error: unknown): boolean {
  return NOT_CONNECTED.has(codeOf(error)) || TLS_CODE.test(codeOf(error));
}

/**
 * True for failures of the connection to the engine (refused, reset, TLS, timed out), as
 * opposed to an answer from it: the engine may be down, and a retry once it is back can work.
 */
export function isTransportError(error: unknown): boolean {
  if (DockerTimeoutError.isInstance(error)) return true;
  if (SandboxUnavailableError.isInstance(error)) {
    return error.reason !== 'engine-error' && error.reason !== 'image-missing';
  }
  const code = codeOf(error);
  return (
    NOT_CONNECTED.has(code) ||
    BROKEN.has(code) ||
    TLS_CODE.test(code) ||
    /socket hang up|other side closed/i.test(messageOf(error))
  );
}

/** True for a raw error of the Docker client (an HTTP answer or a connection failure). */
function isDockerClientError(error: unknown): boolean {
  return statusOf(error) !== undefined || isTransportError(error);
}

const TLS_HINT =
  'Check that the client has the bundle made for this engine (DOCKER_CERT_PATH with ca.pem, ' +
  'cert.pem and key.pem from scripts/setup-sandbox-host.sh) and uses TLS (DOCKER_TLS_VERIFY=1).';

/**
 * Turns any failure of a call to `engine` into the sandbox's error set, naming the engine
 * and keeping the original as `cause`: a refused or broken connection becomes
 * `SandboxUnavailableError` (`docker-unreachable`, `tls-refused`, or `engine-lost` when
 * `inFlight`), an HTTP error answer `engine-error`, a deadline `DockerTimeoutError` with
 * the engine. Errors that are not infrastructure failures (abort reasons, the caller's own
 * exceptions, other typed errors) are returned unchanged.
 *
 * @example
 * ```ts
 * throw toEngineError(error, { engine: 'tcp+tls://10.0.0.5:2376', inFlight: true });
 * ```
 */
export function toEngineError(
  error: unknown,
  {
    engine,
    inFlight = false,
  }: {
    /** The engine's name. */
    engine: string;
    /** The failure hit a run or session that had already reached a container. */
    inFlight?: boolean;
  },
): unknown {
  if (DockerTimeoutError.isInstance(error)) {
    if (error.engine !== undefined) return error;
    return new DockerTimeoutError({
      operation: error.operation,
      timeoutMs: error.timeoutMs,
      engine,
    });
  }
  if (SandboxUnavailableError.isInstance(error)) {
    if (error.engine !== undefined) return error;
    return new SandboxUnavailableError({
      reason: error.reason,
      message: error.message,
      engine,
      statusCode: error.statusCode,
      cause: error.cause,
    });
  }
  if (ToolbeltError.isInstance(error) || !isDockerClientError(error)) return error;
  const detail = messageOf(error).split('\n')[0];
  if (isTlsRefusal(error)) {
    return new SandboxUnavailableError({
      reason: 'tls-refused',
      engine,
      message: `The Docker engine ${engine} refused the TLS connection (${detail}). ${TLS_HINT}`,
      cause: error,
    });
  }
  const status = statusOf(error);
  if (status !== undefined) {
    return new SandboxUnavailableError({
      reason: 'engine-error',
      engine,
      statusCode: status,
      message: `The Docker engine ${engine} answered with an error: ${detail}`,
      cause: error,
    });
  }
  if (inFlight) {
    return new SandboxUnavailableError({
      reason: 'engine-lost',
      engine,
      message:
        `The Docker engine ${engine} went away while the run was in flight (${detail}); ` +
        'its outcome is unknown and it was not retried. Runs go to the other engines meanwhile.',
      cause: error,
    });
  }
  return new SandboxUnavailableError({
    reason: 'docker-unreachable',
    engine,
    message:
      `Cannot reach the Docker engine ${engine} (${detail}). Start dockerd there, or check ` +
      'DOCKER_HOST / the engines option and the network.',
    cause: error,
  });
}
