import type Docker from 'dockerode';
import { dockerCall, isGone } from '../docker/docker-call.ts';
import { PLACEMENT_LABEL } from '../docker/labels.ts';
import type { EngineSet } from '../engines/engine-set.ts';
import type { InterpreterRestore } from '../types.ts';
import type { InterpreterHandle } from './history/interpreter-handle.ts';
import type { PlacedInterpreter } from './interpreter-placement.ts';
import type { KnownInterpreter } from './bounds/placement-gate.ts';

/**
 * The live interpreter a handle names (one inspect), or why it is gone: `idle` when its
 * supervisor ended it after `idleMs` (exit 0), `stopped` when it was killed, crashed, ran out
 * of memory or was removed, `engine` when its engine is down or not answering. A stopped
 * container is removed on the way (in the background).
 *
 * @example
 * ```ts
 * const reached = await reachInterpreter({ handle, engines, known, dockerTimeoutMs: 15_000 });
 * if ('lost' in reached) restore(reached.lost);
 * ```
 */
export async function reachInterpreter({
  handle,
  engines,
  known,
  dockerTimeoutMs,
}: {
  /** The conversation's handle. */
  handle: InterpreterHandle;
  /** Where interpreters run. */
  engines: EngineSet;
  /** Interpreters this process used (a stopped one is forgotten). */
  known: Map<string, KnownInterpreter>;
  /** Deadline of the inspect. */
  dockerTimeoutMs: number;
}): Promise<PlacedInterpreter | { lost: InterpreterRestore['reason'] }> {
  const engine = engines.engines.find(e => e.name === handle.engine && e.state === 'up');
  if (engine === undefined) return { lost: 'engine' };
  const container = engine.docker.getContainer(handle.containerId);
  let info: Docker.ContainerInspectInfo;
  try {
    info = await dockerCall({
      operation: 'container inspect',
      timeoutMs: dockerTimeoutMs,
      call: abortSignal => container.inspect({ abortSignal }),
    });
  } catch (error) {
    if (isGone(error)) return { lost: 'stopped' };
    engine.toError(error);
    return { lost: 'engine' };
  }
  if (!info.State.Running) {
    known.delete(handle.containerId);
    void engine.cleanup.remove(container);
    // The supervisor exits 0 only when idle for `idleMs`.
    return { lost: info.State.ExitCode === 0 && !info.State.OOMKilled ? 'idle' : 'stopped' };
  }
  const placement = info.Config.Labels?.[PLACEMENT_LABEL];
  return { engine, container, secret: handle.secret, startedAt: handle.startedAt, placement };
}
