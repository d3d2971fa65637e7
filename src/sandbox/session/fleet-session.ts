import { SandboxClosedError } from '../../errors/sandbox-closed-error.ts';
import type { SandboxCleanupError } from '../../errors/sandbox-cleanup-error.ts';
import { SandboxUnavailableError } from '../../errors/sandbox-unavailable-error.ts';
import { CleanupTracker } from '../driver/cleanup-tracker.ts';
import { DockerDriver } from '../docker/docker-driver.ts';
import type { Engine } from '../engines/engine.ts';
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
  // Sessions exec commands in a Docker container: other engines are never picked.
  const tried = new Set<Engine>(engines.engines.filter(e => !(e.driver instanceof DockerDriver)));
  if (tried.size === engines.engines.length) {
    throw new SandboxUnavailableError({
      reason: 'unsupported',
      engine: engines.engines.map(engine => engine.name).join(', '),
      message:
        'Sessions (`createSession`) need a Docker engine; this sandbox runs on Kubernetes only. ' +
        'Use `execute` or `executeCell`, or add a Docker engine with gVisor.',
    });
  }
  for (;;) {
    if (isClosed()) throw new SandboxClosedError();
    const engine = await engines.pickForSession(tried);
    const driver = engine.driver as DockerDriver;
    engine.sessions++;
    try {
      const session = await DockerSandboxSession.start({
        docker: driver.docker,
        limits: engine.limits!,
        pidsLimit,
        ttlMs,
        dockerTimeoutMs,
        maxOutputBytes,
        maxFileBytes,
        // The session's own tracker reports its container only; a removal the engine did
        // not answer is retried by the engine when it is back.
        cleanup: new CleanupTracker({
          engine: driver,
          onCleanupError,
          onDeferred: id => engine.defer(id),
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
      if (!driver.isTransportError(error) || !others) throw typed;
    }
  }
}
