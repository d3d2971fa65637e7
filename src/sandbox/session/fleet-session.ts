import { SandboxClosedError } from '../../errors/sandbox-closed-error.ts';
import type { SandboxCleanupError } from '../../errors/sandbox-cleanup-error.ts';
import { CleanupTracker } from '../docker/cleanup-tracker.ts';
import type { Engine } from '../engines/engine.ts';
import { isTransportError } from '../docker/engine-errors.ts';
import type { EngineSet } from '../engines/engine-set.ts';
import { DockerSandboxSession } from './docker-sandbox-session.ts';

/**
 * Starts a session on the healthy engine with the least work (runs in flight plus sessions).
 * If that engine does not answer, the session goes to another one: nothing has run yet.
 *
 * @example
 * ```ts
 * const session = await startSessionOnFleet({ engines, ttlMs: 3_600_000, pidsLimit: 1024, dockerTimeoutMs: 15_000, isClosed: () => false });
 * ```
 */
export async function startSessionOnFleet({
  engines,
  ttlMs,
  pidsLimit,
  dockerTimeoutMs,
  onCleanupError,
  isClosed,
  onClose,
  maxOutputBytes,
  maxFileBytes,
}: {
  /** Where to place the session. */
  engines: EngineSet;
  /** The container's lifetime bound. */
  ttlMs: number;
  /** The container's pids limit. */
  pidsLimit: number;
  /** Deadline of each Docker call. */
  dockerTimeoutMs: number;
  /** Told about a session container that could not be removed. */
  onCleanupError?: (error: SandboxCleanupError) => void;
  /** True once the sandbox is closing. */
  isClosed: () => boolean;
  /** Told once when the session closes. */
  onClose: () => void;
  /** Cap per output stream of each command. */
  maxOutputBytes: number;
  /** Largest file the read methods return. */
  maxFileBytes: number;
}): Promise<DockerSandboxSession> {
  const tried = new Set<Engine>();
  for (;;) {
    if (isClosed()) throw new SandboxClosedError();
    const engine = await engines.pickForSession(tried);
    engine.sessions++;
    try {
      const session = await DockerSandboxSession.start({
        docker: engine.docker,
        limits: engine.limits!,
        pidsLimit,
        ttlMs,
        dockerTimeoutMs,
        maxOutputBytes,
        maxFileBytes,
        // The session's own tracker reports its container only; a removal the engine did
        // not answer is retried by the engine when it is back.
        cleanup: new CleanupTracker({
          dockerTimeoutMs,
          onCleanupError,
          engine: engine.name,
          onDeferred: container => engine.defer(container),
        }),
        engine,
        onClose: () => {
          engine.sessions--;
          onClose();
        },
      });
      return session;
    } catch (error) {
      engine.sessions--;
      const typed = engine.toError(error);
      tried.add(engine);
      const others = engines.engines.some(other => other.state === 'up' && !tried.has(other));
      if (!isTransportError(error) || !others) throw typed;
    }
  }
}
