import type { BoxState } from '../driver/engine-driver.ts';
import { PLACEMENT_LABEL } from '../driver/labels.ts';
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
 * const reached = await reachInterpreter({ handle, engines, known });
 * if ('lost' in reached) restore(reached.lost);
 * ```
 */
export async function reachInterpreter({
  handle,
  engines,
  known,
}: {
  /** The conversation's handle. */
  handle: InterpreterHandle;
  /** Where interpreters run. */
  engines: EngineSet;
  /** Interpreters this process used (a stopped one is forgotten). */
  known: Map<string, KnownInterpreter>;
}): Promise<PlacedInterpreter | { lost: InterpreterRestore['reason'] }> {
  const engine = engines.engines.find(e => e.name === handle.engine && e.state === 'up');
  if (engine === undefined) return { lost: 'engine' };
  const id = handle.containerId;
  let state: BoxState | undefined;
  try {
    state = await engine.driver.state(id);
  } catch (error) {
    engine.toError(error);
    return { lost: 'engine' };
  }
  if (state === undefined) return { lost: 'stopped' };
  if (!state.running) {
    known.delete(id);
    void engine.remove(id);
    // The supervisor exits 0 only when idle for `idleMs`.
    return { lost: state.exitCode === 0 && !state.oomKilled ? 'idle' : 'stopped' };
  }
  const placement = state.labels[PLACEMENT_LABEL];
  return { engine, id, secret: handle.secret, startedAt: handle.startedAt, placement };
}
