import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { SandboxBusyError } from '../../errors/sandbox-busy-error.ts';
import { dockerCall } from '../docker/docker-call.ts';
import { KIND_LABEL, PLACEMENT_LABEL, SANDBOX_LABEL, SCOPE_LABEL } from '../docker/labels.ts';
import type { Engine } from '../engines/engine.ts';
import type { EngineSet } from '../engines/engine-set.ts';
import type { ResolvedConversationOptions } from '../options/conversation-options.ts';
import { Semaphore } from '../run/semaphore.ts';

/** What this process knows of an interpreter it used: for least-recently-used eviction. */
export type KnownInterpreter = { usedAt: number; busy: boolean };

/** Room for one interpreter on an engine, held until it has started (or failed to). */
export type Reservation = {
  /** Label the interpreter with it (`PLACEMENT_LABEL`), so counts take it once while it starts. */
  id: string;
  /** Frees the room (the started container now counts by itself) and the start slot. */
  release(): void;
};

// How long a caller refused for lack of room might wait: the time an idle interpreter takes to
// end is `idleMs`, but one usually finishes a cell in seconds.
const RETRY_AFTER_MS = 5_000;

/**
 * Where a process places conversation interpreters: under `maxInterpreters` (all engines) and
 * `maxPerEngine`, counted as live containers (every replica's, from the engines' labels) plus
 * this process's placements still starting, and with at most `maxConcurrentStarts` starting at
 * once. Counting and reserving are one step per process (serialised), so concurrent placements
 * cannot all see the same free room. Another replica's placements are seen once their container
 * exists: replicas placing at the same instant can overshoot by what they start at once.
 *
 * @example
 * ```ts
 * const gate = new PlacementGate({ engines, options, dockerTimeoutMs: 15_000 });
 * const reservation = await gate.reserve({ engine, known, abortSignal });
 * try { await start({ labels: { [PLACEMENT_LABEL]: reservation.id } }); } finally { reservation.release(); }
 * ```
 */
export class PlacementGate {
  private readonly engines: EngineSet;
  private readonly options: ResolvedConversationOptions;
  private readonly dockerTimeoutMs: number;
  private readonly starts: Semaphore;
  // Placements of this process still starting, by id, with their engine.
  private readonly reserved = new Map<string, Engine>();
  private counting: Promise<unknown> = Promise.resolve();

  constructor({
    engines,
    options,
    dockerTimeoutMs,
  }: {
    /** Every engine (the total bound counts them all). */
    engines: EngineSet;
    /** The bounds. */
    options: ResolvedConversationOptions;
    /** Deadline of each Docker call. */
    dockerTimeoutMs: number;
  }) {
    this.engines = engines;
    this.options = options;
    this.dockerTimeoutMs = dockerTimeoutMs;
    this.starts = new Semaphore({ permits: options.maxConcurrentStarts });
  }

  /**
   * Room for one more interpreter on `engine`, then a start slot. Past `maxPerEngine` the least
   * recently used idle interpreter there is removed when `known` is given (a conversation's
   * placement); past `maxInterpreters`, or with nothing to evict, it throws `SandboxBusyError`
   * (`interpreters`, with a retry hint) or, for `ifRoom` (the pool of waiting interpreters),
   * resolves undefined.
   */
  async reserve({
    engine,
    known,
    ifRoom = false,
    abortSignal,
  }: {
    /** Where the interpreter would start. */
    engine: Engine;
    /** Interpreters this process used (eviction order; busy ones are spared); none: no eviction. */
    known?: ReadonlyMap<string, KnownInterpreter> | undefined;
    /** Resolve undefined instead of throwing or evicting when there is no room. */
    ifRoom?: boolean;
    /** Stops waiting for a start slot. */
    abortSignal?: AbortSignal | undefined;
  }): Promise<Reservation | undefined> {
    const room = this.counting.then(() => this.reserveRoom(engine, known, ifRoom));
    this.counting = room.catch(() => {});
    const id = await room;
    if (id === undefined) return undefined;
    let releaseSlot: (() => void) | undefined;
    const release = () => {
      this.reserved.delete(id);
      releaseSlot?.();
    };
    try {
      releaseSlot = await this.starts.acquire(abortSignal);
    } catch (error) {
      release();
      throw error;
    }
    return { id, release };
  }

  private async reserveRoom(
    engine: Engine,
    known: ReadonlyMap<string, KnownInterpreter> | undefined,
    ifRoom: boolean,
  ): Promise<string | undefined> {
    const { all, here } = await this.countLive(engine);
    const busy = (limit: number) => {
      if (ifRoom) return undefined;
      throw new SandboxBusyError({ resource: 'interpreters', limit, retryAfterMs: RETRY_AFTER_MS });
    };
    if (all >= this.options.maxInterpreters) return busy(this.options.maxInterpreters);
    if (here.count >= this.options.maxPerEngine) {
      const victim = known && !ifRoom ? leastRecentlyUsed(here.idle, known) : undefined;
      if (victim === undefined) return busy(this.options.maxPerEngine);
      // Removed, not just stopped: its conversation is restored in a new one when it goes on.
      await engine.cleanup.remove(engine.docker.getContainer(victim.Id));
    }
    const id = randomBytes(8).toString('hex');
    this.reserved.set(id, engine);
    return id;
  }

  /** Live interpreters on every healthy engine, and on `engine` (with its containers), reserved ones included. */
  private async countLive(engine: Engine) {
    const up = this.engines.engines.filter(candidate => candidate.state === 'up');
    const lists = await Promise.all(
      up.map(async candidate => ({
        engine: candidate,
        live: await liveInterpreters(candidate, this.dockerTimeoutMs),
      })),
    );
    const listed = new Set(
      lists.flatMap(({ live }) => live.map(info => info.Labels?.[PLACEMENT_LABEL])),
    );
    const pending = [...this.reserved].filter(([id]) => !listed.has(id));
    const all = lists.reduce((sum, { live }) => sum + live.length, 0) + pending.length;
    const mine = lists.find(list => list.engine === engine)?.live ?? [];
    const count = mine.length + pending.filter(([, on]) => on === engine).length;
    // One of this process's placements still starting is never the one to evict.
    const idle = mine.filter(info => !this.reserved.has(info.Labels?.[PLACEMENT_LABEL] ?? ''));
    return { all, here: { count, idle } };
  }
}

/** The idle interpreter used longest ago (by this process's record, else the oldest started). */
function leastRecentlyUsed(
  group: readonly Docker.ContainerInfo[],
  known: ReadonlyMap<string, KnownInterpreter>,
): Docker.ContainerInfo | undefined {
  const candidates = group.filter(info => known.get(info.Id)?.busy !== true);
  const lastUse = (info: Docker.ContainerInfo) => known.get(info.Id)?.usedAt ?? info.Created * 1000;
  return candidates.sort((a, b) => lastUse(a) - lastUse(b))[0];
}

/**
 * Running conversation interpreters on an engine (any replica's). A sandbox with a `scope`
 * counts its scope's only: the bounds are the app's, and an engine may serve several apps.
 */
async function liveInterpreters(
  engine: Engine,
  dockerTimeoutMs: number,
): Promise<Docker.ContainerInfo[]> {
  const scope = engine.limits?.labels?.[SCOPE_LABEL];
  const label = [SANDBOX_LABEL, `${KIND_LABEL}=conversation`];
  if (scope !== undefined) label.push(`${SCOPE_LABEL}=${scope}`);
  return await dockerCall({
    operation: 'container list',
    timeoutMs: dockerTimeoutMs,
    call: abortSignal =>
      engine.docker.listContainers({
        filters: { label, status: ['created', 'running'] },
        abortSignal,
      }),
  });
}
