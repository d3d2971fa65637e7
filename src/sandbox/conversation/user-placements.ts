import type { Engine } from '../engines/engine.ts';
import type { EngineSet } from '../engines/engine-set.ts';
import type { ResolvedConversationOptions } from '../options/conversation-options.ts';
import { inTurn } from '../../util/in-turn.ts';
import type { ConversationHistory, Owner } from './history/conversation-history.ts';
import { createHash } from 'node:crypto';
import { InterpreterPool } from './interpreter-pool.ts';
import { SharedInterpreterPool } from './shared-interpreter-pool.ts';
import { type PlacedInterpreter, placeInterpreter } from './interpreter-placement.ts';
import { type KnownInterpreter, PlacementGate } from './bounds/placement-gate.ts';
import { makeRoomForUser } from './user-interpreters.ts';

// How long past its time limit a cell may still hold its interpreter (interrupt, then kill).
const CELL_MARGIN_MS = 30_000;

/**
 * Where a sandbox's conversation interpreters come from and go: places one for a user (room
 * under `maxPerUser`, then the engines' bounds through the placement gate, from the waiting
 * pool or started; with Redis all three at once, in the gate), removes those nothing will use
 * again, and remembers the ones this replica started or served, so `close()` removes its own and
 * leaves those another replica serves.
 *
 * @example
 * ```ts
 * const placements = new UserPlacements({ engines, options, history, known, instanceId, preimport, dockerTimeoutMs: 15_000 });
 * const live = await placements.place(owner, abortSignal, 30_000);
 * ```
 */
export class UserPlacements {
  private readonly engines: EngineSet;
  private readonly options: ResolvedConversationOptions;
  private readonly history: ConversationHistory;
  private readonly known: Map<string, KnownInterpreter>;
  private readonly instanceId: string;
  private readonly preimport: readonly string[];
  private readonly pool: InterpreterPool | SharedInterpreterPool;
  private readonly gate: PlacementGate;
  /** The tail of each user's queue of placements: their list in the store is read, then written. */
  private readonly placements = new Map<string, Promise<unknown>>();
  /** Interpreters this replica started or served, and for whom. */
  private readonly served = new Map<string, { owner: Owner; live: PlacedInterpreter }>();

  constructor({
    engines,
    options,
    history,
    known,
    instanceId,
    preimport,
    dockerTimeoutMs,
    scope,
    image = '',
  }: {
    /** Where interpreters run. */
    engines: EngineSet;
    /** Bounds and limits of interpreters. */
    options: ResolvedConversationOptions;
    /** The users' lists of interpreters, and the handles `close()` reads. */
    history: ConversationHistory;
    /** Interpreters this process used (last use, busy marks), shared with the caller. */
    known: Map<string, KnownInterpreter>;
    /** This sandbox instance (`DockerSandbox#instanceId`). */
    instanceId: string;
    /** Modules each interpreter imports when it starts. */
    preimport: readonly string[];
    /** The engines' call deadline (how long an eviction waits for its victim to stop). */
    dockerTimeoutMs: number;
    /** The sandbox's scope (its bounds are its own). */
    scope?: string | undefined;
    /** The sandbox's image (interpreters of other images are not taken from a shared pool). */
    image?: string;
  }) {
    this.engines = engines;
    this.options = options;
    this.history = history;
    this.known = known;
    this.instanceId = instanceId;
    this.preimport = preimport;
    const gate = new PlacementGate({ engines, options, dockerTimeoutMs, scope });
    this.gate = gate;
    const reserve = (engine: Engine) =>
      gate.reserve({ engine, ifRoom: true }).catch(() => undefined);
    // Waiting interpreters on an engine every replica reaches (Kubernetes) are the cluster's.
    const shared = engines.engines.length === 1 && engines.engines[0]!.driver.claim !== undefined;
    this.pool = shared
      ? new SharedInterpreterPool({
          ...{ options, preimport, instanceId, reserve, engines },
          key: createHash('sha256')
            .update(
              JSON.stringify([image, options.memoryBytes, options.pidsLimit, options.tmpfsMiB]),
            )
            .update(JSON.stringify([options.idleMs, options.maxLifeMs, preimport, scope ?? '']))
            .digest('hex')
            .slice(0, 16),
        })
      : new InterpreterPool({
          // An engine that keeps warm boxes itself (agent-sandbox) needs no waiting interpreters.
          options: engines.engines.every(engine => engine.driver.keepsWarmPool === true)
            ? { ...options, warmPoolSize: 0 }
            : options,
          ...{ preimport, reserve },
        });
  }

  /** Interpreters ready and waiting for a new conversation. */
  get warmCount(): number {
    return this.pool.readyCount;
  }

  /** Starts the waiting interpreters on every healthy engine (done on first use otherwise). */
  prewarm(): void {
    for (const engine of this.engines.engines) this.pool.fill(engine);
  }

  /**
   * Marks `live` busy with a cell of `cellMs` (0: idle again), for other replicas' evictions
   * (with Redis; this process has its own record).
   */
  use(live: PlacedInterpreter, cellMs: number): void {
    this.gate.use(live.placement, cellMs > 0 ? cellMs + CELL_MARGIN_MS : 0);
  }

  /** Records that this replica runs a cell of `owner` in `live` (for `close()`). */
  serve(owner: Owner, live: PlacedInterpreter): void {
    this.served.set(live.id, { owner, live });
  }

  /**
   * Stops the pool (waiting interpreters are removed), removes the interpreters whose last
   * cell this replica ran (whoever started them) and returns those it started that another
   * replica serves now (their handles name another `servedBy`): the sandbox leaves them running
   * and removes the rest of its own. A store that cannot be read keeps nothing (the
   * conversation is restored from its history where it goes on).
   */
  async close(): Promise<Set<string>> {
    await this.pool.close();
    const keep = new Set<string>();
    await Promise.all(
      [...this.served].map(async ([containerId, { owner, live }]) => {
        const handle = await this.history.load(owner).catch(() => undefined);
        if (handle?.containerId !== containerId) return;
        if (handle.servedBy !== this.instanceId) keep.add(containerId);
        else await live.engine.remove(live.id);
      }),
    );
    this.served.clear();
    return keep;
  }

  /** Removes an interpreter nothing will use again (in the background; failures are reported). */
  async discard(live: PlacedInterpreter): Promise<void> {
    this.known.delete(live.id);
    this.served.delete(live.id);
    void live.engine.remove(live.id);
  }

  /**
   * A new interpreter for one of the user's conversations, after making room under
   * `maxPerUser` (see `makeRoomForUser`; with Redis, in the gate); recorded in the user's list in
   * the store (with Redis, in the user's leases), and marked busy until its cell of `cellMs` (and
   * any replay before it) ends, so no eviction takes it meanwhile.
   */
  place(owner: Owner, abortSignal: AbortSignal, cellMs: number): Promise<PlacedInterpreter> {
    // One at a time per user in this process: concurrent placements would each read the list,
    // then each write it, and the last write would forget the others' interpreters. Across
    // replicas this is exact with Redis only (see `PlacementGate`).
    return inTurn({
      queues: this.placements,
      key: owner.userId,
      work: () => this.placeNow(owner, abortSignal, cellMs),
    });
  }

  private async placeNow(
    owner: Owner,
    abortSignal: AbortSignal,
    cellMs: number,
  ): Promise<PlacedInterpreter> {
    // Interpreters idle longer than idleMs have ended by themselves, and none outlives maxLifeMs.
    const horizon = Date.now() - this.options.idleMs - 60_000;
    for (const [id, known] of this.known) {
      if (!known.busy && known.usedAt < horizon) this.known.delete(id);
    }
    for (const [id, { live }] of this.served) {
      if (live.startedAt < Date.now() - this.options.maxLifeMs) this.served.delete(id);
    }
    await this.history.sweep();
    const { userId } = owner;
    const exact = await this.gate.exact();
    const mine = exact
      ? undefined
      : await makeRoomForUser({
          ...{ userId, history: this.history, engines: this.engines, known: this.known },
          maxPerUser: this.options.maxPerUser,
        });
    const placed = await placeInterpreter({
      ...{ engines: this.engines, gate: this.gate, options: this.options },
      preimport: this.preimport,
      ...{ pool: this.pool, known: this.known, abortSignal },
      user: exact ? await this.history.userTag(userId) : undefined,
      busyMs: this.options.replayDeadlineMs + cellMs + CELL_MARGIN_MS,
    });
    const { engine, id, startedAt } = placed;
    this.known.set(id, { usedAt: Date.now(), busy: true });
    this.served.set(id, { owner, live: placed });
    // With Redis the user's leases are the record every replica counts.
    if (mine === undefined) return placed;
    mine.push({ engine: engine.name, containerId: id, startedAt });
    try {
      await this.history.saveUserInterpreters(userId, mine);
    } catch (error) {
      // Unrecorded, it would escape the user's bound and idle on, holding memory.
      await this.discard(placed);
      throw error;
    }
    return placed;
  }
}
