import { createHash, randomBytes } from 'node:crypto';
import type { RedisScriptClient } from '../../../util/redis/redis-store-client.ts';
import type { BoxInfo } from '../../driver/engine-driver.ts';
import { PLACEMENT_LABEL } from '../../driver/labels.ts';
import type { Engine } from '../../engines/engine.ts';
import type { EngineSet } from '../../engines/engine-set.ts';
import type { ResolvedConversationOptions } from '../../options/conversation-options.ts';
import { Semaphore } from '../../run/semaphore.ts';
import {
  type KnownInterpreter,
  interpretersBusy,
  leastRecentlyUsed,
  listEngines,
} from './engine-listing.ts';
import { type HeldRoom, LeasedRoom } from './leased-room.ts';
import { recordLeases } from './record-leases.ts';
import { findLeases } from './redis-leases.ts';

export type { KnownInterpreter } from './engine-listing.ts';

/** Room for one interpreter on an engine, held until it has started (or failed to). */
export type Reservation = HeldRoom;

/**
 * Where a process places conversation interpreters: under `maxInterpreters` (all engines),
 * `maxPerEngine` and, with Redis or on Kubernetes, `maxPerUser`, and with at most
 * `maxConcurrentStarts` starting at once in this process.
 *
 * On a Kubernetes engine the room is reserved in its API server (a Lease object written with
 * compare-and-set, see `recordLeases`), exactly as with Redis and whatever the store. With a
 * Redis store (unstorage's redis driver, or a client given as `conversations.redis`) the
 * room is reserved atomically in Redis (see `LeasedRoom`): replicas sharing it never pass the
 * bounds together. Otherwise the bounds count live containers (every replica's, from the
 * engines' labels) plus this process's placements still starting; counting and reserving are one
 * step per process (serialised), so concurrent placements cannot all see the same free room, but
 * another replica's placements are seen only once their container exists: replicas placing at
 * the same instant can overshoot by what they start at once (unstorage has no compare-and-set).
 *
 * @example
 * ```ts
 * const gate = new PlacementGate({ engines, options, dockerTimeoutMs: 15_000 });
 * const reservation = await gate.reserve({ engine, known, abortSignal });
 * try {
 *   const container = await start({ labels: { [PLACEMENT_LABEL]: reservation.id } });
 *   await reservation.confirm(container.id, 0);
 * } finally { reservation.release(); }
 * ```
 */
export class PlacementGate {
  private readonly engines: EngineSet;
  private readonly options: ResolvedConversationOptions;
  private readonly dockerTimeoutMs: number;
  private readonly starts: Semaphore;
  private readonly redis: RedisScriptClient | undefined;
  private readonly scope: string | undefined;
  private leased: Promise<LeasedRoom | undefined> | undefined;
  // Placements of this process still starting, by id, with their engine (without Redis).
  private readonly reserved = new Map<string, Engine>();
  private counting: Promise<unknown> = Promise.resolve();

  constructor({
    engines,
    options,
    dockerTimeoutMs,
    scope,
  }: {
    /** Every engine (the total bound counts them all). */
    engines: EngineSet;
    /** The bounds, and the store or Redis client where replicas reserve them. */
    options: ResolvedConversationOptions;
    /** Deadline of each Docker call. */
    dockerTimeoutMs: number;
    /** The sandbox's scope (apps sharing a Redis keep their bounds apart). */
    scope?: string | undefined;
  }) {
    this.engines = engines;
    this.options = options;
    this.dockerTimeoutMs = dockerTimeoutMs;
    this.starts = new Semaphore({ permits: options.maxConcurrentStarts });
    this.redis = options.redis;
    this.scope = scope;
  }

  /**
   * Whether the bounds are reserved in Redis: then `maxPerUser` is too (give `user` to
   * `reserve`, and `claim` waiting interpreters), and cells are marked busy with `use`.
   */
  async exact(): Promise<boolean> {
    return (await this.room()) !== undefined;
  }

  /**
   * Room for one more interpreter on `engine`, then a start slot. Past `maxPerEngine` (or, with
   * Redis, the user's `maxPerUser`) the least recently used idle interpreter there is removed
   * when `known` is given (a conversation's placement); past `maxInterpreters`, or with nothing
   * to evict, it throws `SandboxBusyError` (`interpreters`, with a retry hint) or, for `ifRoom`
   * (the pool of waiting interpreters), resolves undefined.
   */
  async reserve({
    engine,
    known,
    ifRoom = false,
    user,
    abortSignal,
  }: {
    /** Where the interpreter would start. */
    engine: Engine;
    /** Interpreters this process used (eviction order; busy ones are spared); none: no eviction. */
    known?: Map<string, KnownInterpreter> | undefined;
    /** Resolve undefined instead of throwing or evicting when there is no room. */
    ifRoom?: boolean;
    /** Whose interpreter (a tag; with Redis, bound by `maxPerUser`); none: a waiting one. */
    user?: string | undefined;
    /** Stops waiting for a start slot. */
    abortSignal?: AbortSignal | undefined;
  }): Promise<Reservation | undefined> {
    const leased = await this.room();
    const held = leased
      ? await leased.reserve({ engine, known, ifRoom, user })
      : await this.reserveHere(engine, known, ifRoom);
    if (held === undefined) return undefined;
    let releaseSlot: (() => void) | undefined;
    const release = () => {
      held.release();
      releaseSlot?.();
    };
    try {
      releaseSlot = await this.starts.acquire(abortSignal);
    } catch (error) {
      release();
      throw error;
    }
    return { id: held.id, confirm: held.confirm, release };
  }

  /** With Redis, gives a waiting interpreter to `user` within `maxPerUser` (else nothing to do). */
  async claim(request: Parameters<LeasedRoom['claim']>[0]): Promise<void> {
    await (await this.room())?.claim(request);
  }

  /** With Redis, records that an interpreter runs a cell for up to `busyMs` (0: idle now). */
  use(placement: string | undefined, busyMs: number): void {
    if (placement === undefined) return;
    void this.room().then(
      leased => leased?.use(placement, busyMs),
      () => {},
    );
  }

  private room(): Promise<LeasedRoom | undefined> {
    if (this.leased === undefined) {
      const { engines, options, dockerTimeoutMs } = this;
      // An engine whose API server every replica shares (Kubernetes) holds the leases itself.
      const [single] = engines.engines;
      const record =
        engines.engines.length === 1
          ? single!.driver.sharedRecord?.(
              // A scope may hold what an object's name may not: its hash goes in the name.
              `ai-toolbelt-interpreters${this.scope === undefined ? '' : `-${createHash('sha256').update(this.scope).digest('hex').slice(0, 16)}`}`,
            )
          : undefined;
      const found =
        record !== undefined
          ? Promise.resolve(recordLeases(record))
          : findLeases({ store: options.store, client: this.redis, scope: this.scope });
      const leased = found.then(
        leases => leases && new LeasedRoom({ engines, options, dockerTimeoutMs, leases }),
      );
      // Redis not answering is not a store without Redis: asked again next time.
      leased.catch(() => (this.leased = undefined));
      this.leased = leased;
    }
    return this.leased;
  }

  private async reserveHere(
    engine: Engine,
    known: ReadonlyMap<string, KnownInterpreter> | undefined,
    ifRoom: boolean,
  ): Promise<HeldRoom | undefined> {
    const room = this.counting.then(() => this.reserveRoom(engine, known, ifRoom));
    this.counting = room.catch(() => {});
    const id = await room;
    if (id === undefined) return undefined;
    return { id, confirm: async () => {}, release: () => this.reserved.delete(id) };
  }

  private async reserveRoom(
    engine: Engine,
    known: ReadonlyMap<string, KnownInterpreter> | undefined,
    ifRoom: boolean,
  ): Promise<string | undefined> {
    const { all, here } = await this.countLive(engine);
    const busy = (limit: number) => {
      if (ifRoom) return undefined;
      throw interpretersBusy(limit);
    };
    if (all >= this.options.maxInterpreters) return busy(this.options.maxInterpreters);
    if (here.count >= this.options.maxPerEngine) {
      const victim = known && !ifRoom ? leastRecentlyUsed(here.idle, known) : undefined;
      if (victim === undefined) return busy(this.options.maxPerEngine);
      // Removed, not just stopped: its conversation is restored in a new one when it goes on.
      await engine.remove(victim.id);
    }
    const id = randomBytes(8).toString('hex');
    this.reserved.set(id, engine);
    return id;
  }

  /** Live interpreters on every healthy engine, and on `engine` (with its containers), reserved ones included. */
  private async countLive(engine: Engine) {
    const lists = await listEngines({ engines: this.engines });
    const listed = new Set(
      lists.flatMap(({ live }) => live.map(info => info.labels[PLACEMENT_LABEL])),
    );
    const pending = [...this.reserved].filter(([id]) => !listed.has(id));
    const all = lists.reduce((sum, { live }) => sum + live.length, 0) + pending.length;
    const mine: BoxInfo[] = lists.find(list => list.engine === engine)?.live ?? [];
    const count = mine.length + pending.filter(([, on]) => on === engine).length;
    // One of this process's placements still starting is never the one to evict.
    const idle = mine.filter(info => !this.reserved.has(info.labels[PLACEMENT_LABEL] ?? ''));
    return { all, here: { count, idle } };
  }
}
