import type Docker from 'dockerode';
import { SandboxClosedError } from '../../errors/sandbox-closed-error.ts';
import type { EngineLink } from '../engines/engine-types.ts';
import type { ContainerExitWatch } from './exec-process.ts';

/**
 * Watches a session's container with one long-poll (`docker wait`) and, when given, its
 * engine: when the container stops or the engine is lost, commands in flight are ended and
 * later calls get `error`. gVisor ends the sandbox (exit 2) when its host threads reach the
 * pids limit; without this, commands in flight would hang.
 *
 * @example
 * ```ts
 * const exit = watchContainerExit({ container, engine, closed: () => this.closed });
 * if (exit.error) throw exit.error;
 * ```
 */
export function watchContainerExit({
  container,
  engine,
  closed,
}: {
  /** The session's container. */
  container: Docker.Container;
  /** Its engine, whose loss ends the session (`SandboxUnavailableError`, `engine-lost`). */
  engine: EngineLink | undefined;
  /** True once the session was closed on purpose (the error then says just that). */
  closed: () => boolean;
}): ContainerExitWatch & { error: Error | undefined; stop(): void } {
  const listeners = new Set<() => void>();
  const watch = {
    error: undefined as Error | undefined,
    onExit: (listener: () => void) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    stop: () => {},
  };
  const exited = (error: Error) => {
    if (watch.error !== undefined) return;
    watch.error = closed() ? new SandboxClosedError({ what: 'sandbox session' }) : error;
    for (const listener of listeners) listener();
    listeners.clear();
  };
  // When the engine is taken out, the session is lost with it (its wait may never end).
  watch.stop = engine?.onLost(exited) ?? (() => {});
  void (container.wait() as Promise<{ StatusCode: number }>).then(
    ({ StatusCode: status }) => {
      const why = status === 2 ? ': gVisor ended the sandbox, e.g. at its pids limit' : '';
      exited(
        new SandboxClosedError({
          what: `sandbox session (its container exited with status ${status}${why})`,
        }),
      );
    },
    (error: unknown) => {
      // The long-poll broke: the engine went away (or the container was removed).
      const typed = engine?.toError(error, { inFlight: true });
      exited(
        typed instanceof Error
          ? typed
          : new SandboxClosedError({ what: 'sandbox session (its container is gone)' }),
      );
    },
  );
  return watch;
}
