import { randomBytes } from 'node:crypto';
import { SandboxBusyError } from '../../errors/sandbox-busy-error.ts';
import type { Engine } from '../engines/engine.ts';
import type { EngineSet } from '../engines/engine-set.ts';
import type { ResolvedConversationOptions } from '../options/conversation-options.ts';
import { startOnEngine } from './interpreter-container.ts';
import type { KnownInterpreter, PlacementGate } from './bounds/placement-gate.ts';

/** A started interpreter and where it runs. */
export type PlacedInterpreter = {
  engine: Engine;
  /** Its box (container or pod) on the engine. */
  id: string;
  secret: string;
  startedAt: number;
  /** Its placement id (`PLACEMENT_LABEL`: its lease's, with Redis); unknown for an older container. */
  placement?: string | undefined;
};

/**
 * A new interpreter for a conversation on the healthy engine with the least work: a waiting
 * one from `pool` when there is one, else started now, within the bounds `gate` holds (see
 * `PlacementGate`: `maxInterpreters`, `maxPerEngine`, `maxConcurrentStarts`; past the per-engine
 * bound the least recently used idle interpreter there is removed, and its conversation is
 * restored when it goes on; past the total bound it throws `SandboxBusyError`). With Redis
 * (`user` given), the user's `maxPerUser` is held there too, a waiting interpreter claimed for
 * them, and the new interpreter counts as busy for `busyMs`. If an engine does not answer,
 * another is tried.
 *
 * @example
 * ```ts
 * const placed = await placeInterpreter({ engines, gate, options, preimport, pool, known, busyMs: 60_000 });
 * ```
 */
export async function placeInterpreter({
  engines,
  gate,
  options,
  preimport,
  pool,
  known,
  user,
  busyMs,
  abortSignal,
}: {
  /** Where interpreters may go. */
  engines: EngineSet;
  /** The bounds on live and starting interpreters. */
  gate: PlacementGate;
  /** Limits of each interpreter. */
  options: ResolvedConversationOptions;
  /** Modules imported before the first cell. */
  preimport: readonly string[];
  /** Interpreters waiting for a conversation (an `InterpreterPool`: by shape, so neither file imports the other). */
  pool: {
    take(engine: Engine): Promise<PlacedInterpreter | undefined>;
    putBack(placed: PlacedInterpreter): void;
  };
  /** Interpreters this process used, by container id (eviction order; busy ones are spared). */
  known: Map<string, KnownInterpreter>;
  /** Whose interpreter (a tag), when the bounds are held in Redis (see `PlacementGate#exact`). */
  user?: string | undefined;
  /** How long the new interpreter counts as busy (its replay and first cell), with Redis. */
  busyMs: number;
  /** Aborting stops the start. */
  abortSignal?: AbortSignal | undefined;
}): Promise<PlacedInterpreter> {
  const tried = new Set<Engine>();
  for (;;) {
    abortSignal?.throwIfAborted();
    const engine = await engines.pickForSession(tried);
    try {
      const warm = await pool.take(engine);
      if (warm !== undefined && user !== undefined && warm.placement !== undefined) {
        const { id, placement } = warm;
        await gate
          .claim({ engine, container: id, placement, user, known, busyMs })
          .catch((error: unknown) => {
            pool.putBack(warm);
            throw error;
          });
      }
      if (warm !== undefined) return warm;
      const reservation = (await gate.reserve({ engine, known, user, abortSignal }))!;
      try {
        const secret = randomBytes(16).toString('hex');
        const id = await startOnEngine({
          ...{ engine, options, placement: reservation.id, secret, preimport, abortSignal },
        });
        await reservation.confirm(id, busyMs);
        return { engine, id, secret, startedAt: Date.now(), placement: reservation.id };
      } finally {
        // Counted by its container from now on (or gone, when the start failed).
        reservation.release();
      }
    } catch (error) {
      abortSignal?.throwIfAborted();
      if (SandboxBusyError.isInstance(error)) throw error;
      tried.add(engine);
      const others = engines.engines.some(other => other.state === 'up' && !tried.has(other));
      if (!engine.driver.isTransportError(error) || !others) throw engine.toError(error);
    }
  }
}
