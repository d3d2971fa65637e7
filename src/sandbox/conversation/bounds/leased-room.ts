import { randomBytes } from 'node:crypto';
import type { Engine } from '../../engines/engine.ts';
import type { EngineSet } from '../../engines/engine-set.ts';
import type { ResolvedConversationOptions } from '../../options/conversation-options.ts';
import {
  type EngineListing,
  type KnownInterpreter,
  interpretersBusy,
  listEngines,
  placementOf,
} from './engine-listing.ts';
import type { LeaseAnswer, Leases } from './redis-leases.ts';

/** Room held for one interpreter while it starts. */
export type HeldRoom = {
  /** The placement id: the interpreter's label (`PLACEMENT_LABEL`) and its lease's id. */
  id: string;
  /** The interpreter started as `containerId`: the room stays held while it lives. */
  confirm(containerId: string, busyMs: number): Promise<void>;
  /** Gives the room back unless the interpreter was confirmed (it started, or failed to). */
  release(): void;
};

// A starting lease lasts this long unless renewed: what a replica killed mid-start holds.
const START_LEASE_MS = 15_000;
const RENEW_EVERY_MS = 5_000;
// Evictions a placement makes before it is refused: replicas evicting at once may each take
// the room the other made.
const MAX_ATTEMPTS = 4;
const STOPPED_POLL_MS = 50;

/**
 * Room for interpreters reserved in Redis, so replicas sharing it never pass `maxInterpreters`,
 * `maxPerEngine` or `maxPerUser` together (see `LEASE_SCRIPT`). A reservation lists the
 * engines (after asking Redis its time), then runs the script, which counts leases and unleased
 * live interpreters, checks the three bounds and adds a starting lease in one step. The lease
 * is renewed while the start goes on, confirmed with the container, and then lasts until the
 * container is missing from a later listing (ended, removed) or `maxLifeMs` passes (the
 * container's own end). Confirmed leases are not renewed per cell: a listing is the proof of
 * life, and every reservation lists. What a lease carries per cell is whether the interpreter is
 * busy (`use`), so no replica evicts another's running interpreter. Past the engine or user bound
 * the least recently used idle interpreter there is removed, then the reservation is tried again.
 *
 * @example
 * ```ts
 * const room = new LeasedRoom({ engines, options, dockerTimeoutMs: 15_000, leases });
 * const held = await room.reserve({ engine, known, user: tag });
 * ```
 */
export class LeasedRoom {
  private readonly engines: EngineSet;
  private readonly options: ResolvedConversationOptions;
  private readonly dockerTimeoutMs: number;
  private readonly leases: Leases;

  constructor({
    engines,
    options,
    dockerTimeoutMs,
    leases,
  }: {
    /** Every engine. */
    engines: EngineSet;
    /** The bounds. */
    options: ResolvedConversationOptions;
    /** Deadline of each Docker call. */
    dockerTimeoutMs: number;
    /** The app's leases. */
    leases: Leases;
  }) {
    this.engines = engines;
    this.options = options;
    this.dockerTimeoutMs = dockerTimeoutMs;
    this.leases = leases;
  }

  /**
   * Room for a new interpreter on `engine` (for `user`, a tag; none for a waiting one), or
   * undefined with `ifRoom` when there is none; else evicts (given `known`), or throws
   * `SandboxBusyError`.
   */
  async reserve({
    engine,
    known,
    ifRoom = false,
    user = '',
  }: {
    engine: Engine;
    known?: Map<string, KnownInterpreter> | undefined;
    ifRoom?: boolean;
    user?: string | undefined;
  }): Promise<HeldRoom | undefined> {
    const { maxInterpreters: maxAll, maxPerEngine: maxEngine, maxPerUser: maxUser } = this.options;
    for (let attempt = 1; ; attempt++) {
      const { listing, lists } = await this.list();
      const id = randomBytes(8).toString('hex');
      const answer = await this.leases.reserve({
        ...{ id, engine: engine.name, user, listing },
        ...{ bounds: { maxAll, maxEngine, maxUser }, ttlMs: START_LEASE_MS },
      });
      if (answer.ok) return this.hold(id, engine.name, user);
      if (ifRoom) return undefined;
      await this.evict({ answer, lists, known, attempt });
    }
  }

  /** Gives a waiting interpreter to `user` (within `maxPerUser`, evicting as placing does). */
  async claim({
    engine,
    container,
    placement,
    user,
    known,
    busyMs,
  }: {
    engine: Engine;
    container: string;
    placement: string;
    user: string;
    known: Map<string, KnownInterpreter>;
    busyMs: number;
  }): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const { listing, lists } = await this.list();
      const answer = await this.leases.claim({
        ...{ id: placement, engine: engine.name, container, user, listing },
        ...{ maxUser: this.options.maxPerUser, ttlMs: this.lifeMs, busyMs },
      });
      if (answer.ok) return;
      await this.evict({ answer, lists, known, attempt });
    }
  }

  /** Records that the interpreter runs a cell for up to `busyMs` (0: it is idle now). */
  use(placement: string, busyMs: number): void {
    // Not awaited: a cell does not wait for Redis. Lost, it leaves an older mark.
    void this.leases.use(placement, busyMs).catch(() => {});
  }

  // A container ends at maxLifeMs (its `timeout -s KILL`), with some slack for clocks.
  private get lifeMs(): number {
    return this.options.maxLifeMs + 60_000;
  }

  private hold(id: string, engine: string, user: string): HeldRoom {
    let confirmed = false;
    const renewal = setInterval(() => {
      void this.leases.renew(id, START_LEASE_MS).catch(() => {});
    }, RENEW_EVERY_MS);
    renewal.unref?.();
    return {
      id,
      confirm: async (container, busyMs) => {
        clearInterval(renewal);
        confirmed = true;
        // Redis failing here fails the conversation's next store write too (which removes the
        // interpreter); meanwhile its container counts by the listings once the lease expires.
        await this.leases
          .confirm({ id, engine, user, container, ttlMs: this.lifeMs, busyMs })
          .catch(() => {});
      },
      release: () => {
        clearInterval(renewal);
        if (!confirmed) void this.leases.release(id).catch(() => {});
      },
    };
  }

  // Redis's time first: leases confirmed after it are not judged by this listing.
  private async list(): Promise<{
    listing: { listedAt: number; listed: Record<string, string[]> };
    lists: EngineListing[];
  }> {
    const listedAt = await this.leases.now();
    const lists = await listEngines({ engines: this.engines });
    const listed = Object.fromEntries(
      lists.map(({ engine, live }) => [engine.name, live.map(placementOf)]),
    );
    return { listing: { listedAt, listed }, lists };
  }

  /** Removes the least recently used idle interpreter where the bound is full, or throws busy. */
  private async evict({
    answer,
    lists,
    known,
    attempt,
  }: {
    answer: Exclude<LeaseAnswer, { ok: true }>;
    lists: EngineListing[];
    /** None: nothing is evicted. */
    known: Map<string, KnownInterpreter> | undefined;
    attempt: number;
  }): Promise<void> {
    const { maxInterpreters, maxPerEngine, maxPerUser } = this.options;
    const limit = { all: maxInterpreters, engine: maxPerEngine, user: maxPerUser }[answer.full];
    if (answer.full === 'all' || known === undefined || attempt >= MAX_ATTEMPTS)
      throw interpretersBusy(limit);
    const candidates = answer.spare.flatMap(spare => {
      const listing = lists.find(list => list.engine.name === spare.e);
      const info = listing?.live.find(live => placementOf(live) === spare.id);
      const container = spare.c || info?.id;
      const mark = container === undefined ? undefined : known.get(container);
      if (listing === undefined || container === undefined || mark?.busy) return [];
      // The last use any replica recorded, else this process's, else its start.
      const lastUse = Math.max(spare.l, mark?.usedAt ?? 0) || (info?.createdMs ?? 0);
      return [{ engine: listing.engine, container, lastUse }];
    });
    const victim = candidates.sort((a, b) => a.lastUse - b.lastUse)[0];
    if (victim === undefined) throw interpretersBusy(limit);
    known.delete(victim.container);
    // Removed, not just stopped: its conversation is restored in a new one when it goes on.
    await victim.engine.remove(victim.container);
    await this.untilStopped(victim.engine, victim.container);
  }

  /**
   * Waits (up to the engine's deadline) until the engine no longer lists `id` as live: a
   * removal that another placement already started answers at once, and the next listing must
   * not count the victim again.
   */
  private async untilStopped(engine: Engine, id: string): Promise<void> {
    const deadline = Date.now() + this.dockerTimeoutMs;
    while (Date.now() < deadline) {
      const state = await engine.driver.state(id).catch(
        () => undefined, // not answering: the next listing tells
      );
      if (!state?.running && !state?.starting) return;
      await new Promise(resolve => setTimeout(resolve, STOPPED_POLL_MS));
    }
  }
}
