// docker/: Docker primitives: API calls with deadlines, the container spec, create and remove,
// labels, sweeps, attach frames.
import { DockerTimeoutError } from '../../errors/docker-timeout-error.ts';
import { withDeadline } from '../../util/with-deadline.ts';

/**
 * Runs one Docker API call with a deadline. dockerode aborts the HTTP request through the
 * signal; the race guarantees the caller gets its answer even if the abort is not honoured
 * (a hijacked socket, a hung `runsc start`).
 *
 * @example
 * ```ts
 * await dockerCall({ operation: 'container start', timeoutMs: 10_000, call: (abortSignal) => c.start({ abortSignal }) });
 * ```
 */
export async function dockerCall<T>({
  operation,
  timeoutMs,
  call,
}: {
  /** Names the call in the `DockerTimeoutError`, e.g. `container start`. */
  operation: string;
  /** Deadline for the call. */
  timeoutMs: number;
  /** The call; pass the signal on to dockerode as `abortSignal`. */
  call: (abortSignal: AbortSignal) => Promise<T>;
}): Promise<T> {
  return withDeadline({
    timeoutMs,
    run: call,
    timeoutError: () => new DockerTimeoutError({ operation, timeoutMs }),
  });
}

/** True for Docker's "already gone" answers (404, 409 "not running", 304), which cleanup may ignore. */
export function isGone(error: unknown): boolean {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return status === 404 || status === 409 || status === 304;
}
