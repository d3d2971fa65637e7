import type Docker from 'dockerode';
import { dockerCall } from './docker-call.ts';

/** Attempts at most, for the exit race below. */
const MAX_ATTEMPTS = 4;

/**
 * Force-removes a container (killing it if it runs) with its anonymous volumes.
 *
 * A force removal that arrives while the container is exiting (right after our own kill at a
 * timeout, or its TTL wrapper's) can lose a race inside the engine: it sees the container
 * running, its kill then finds it stopped, and the engine answers 500 "Could not kill running
 * container ..., cannot remove - Container ... is not running". The container is there and
 * stopped, so the removal is tried again (after 25, 50, 100 ms); any other error is the caller's.
 *
 * @example
 * ```ts
 * await removeContainer({ container: docker.getContainer(id), dockerTimeoutMs: 10_000 });
 * ```
 */
export async function removeContainer({
  container,
  dockerTimeoutMs,
  retryDelayMs = 25,
}: {
  /** The container to remove. */
  container: Pick<Docker.Container, 'remove'>;
  /** Deadline of each removal call. */
  dockerTimeoutMs: number;
  /** Pause before the first retry; doubled for each later one. */
  retryDelayMs?: number;
}): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await dockerCall({
        operation: 'container remove',
        timeoutMs: dockerTimeoutMs,
        call: abortSignal => container.remove({ force: true, v: true, abortSignal }),
      });
      return;
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS || !isExitRace(error)) throw error;
      await new Promise(resolve => setTimeout(resolve, retryDelayMs * 2 ** (attempt - 1)));
    }
  }
}

/** True for the engine's answer when a force removal's kill met a container that had just stopped. */
export function isExitRace(error: unknown): boolean {
  const { statusCode, json, message } = (error ?? {}) as {
    statusCode?: unknown;
    json?: { message?: unknown } | null;
    message?: unknown;
  };
  if (statusCode !== 500) return false;
  const text = typeof json?.message === 'string' ? json.message : String(message ?? '');
  return /cannot remove\b.*\bis not running/i.test(text);
}
