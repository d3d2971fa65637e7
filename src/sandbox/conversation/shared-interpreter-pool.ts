import { randomBytes } from 'node:crypto';
import type { BoxInfo } from '../driver/engine-driver.ts';
import { INSTANCE_LABEL, PLACEMENT_LABEL, POOL_LABEL, READY_LABEL } from '../driver/labels.ts';
import type { Engine } from '../engines/engine.ts';
import type { EngineSet } from '../engines/engine-set.ts';
import type { ResolvedConversationOptions } from '../options/conversation-options.ts';
import { PendingWork } from '../../util/pending-work.ts';
import { sortNewestFirst } from '../run/shared-warm-pool.ts';
import type { Reservation } from './bounds/placement-gate.ts';
import { sendHello, startOnEngine } from './interpreter-container.ts';
import type { PlacedInterpreter } from './interpreter-placement.ts';

/** How long before its idle expiry a waiting interpreter is no longer taken. */
const EXPIRY_MARGIN_MS = 30_000;

/**
 * Interpreters waiting for a new conversation on an engine every replica reaches (Kubernetes):
 * the cluster's pool, `warmPoolSize` over all replicas, as `InterpreterPool` is a process's. A
 * waiting interpreter starts without a secret (its supervisor adopts the first hello); a replica
 * takes one by one conditional update of its labels (`claim`), and only the winner sends the
 * hello with a secret of its own, so two replicas never take the same interpreter and no secret
 * is ever shared. Starts hold room under the bounds (`reserve`) like any placement, and are
 * marked ready once their pre-imports are done; those are taken first.
 *
 * @example
 * ```ts
 * const pool = new SharedInterpreterPool({ options, preimport, key, instanceId, reserve, engines });
 * const warm = await pool.take(engine); // undefined: start one
 * ```
 */
export class SharedInterpreterPool {
  private readonly options: ResolvedConversationOptions;
  private readonly preimport: readonly string[];
  private readonly key: string;
  private readonly instanceId: string;
  private readonly reserve: (engine: Engine) => Promise<Reservation | undefined>;
  private readonly engines: EngineSet;
  private readonly starting = new Set<string>();
  private readonly work = new PendingWork();
  private readonly stop = new AbortController();
  private listed: BoxInfo[] = [];
  private filling: Promise<void> | undefined;

  constructor({
    options,
    preimport,
    key,
    instanceId,
    reserve,
    engines,
  }: {
    /** `warmPoolSize`, limits and idle expiry of interpreters. */
    options: ResolvedConversationOptions;
    /** Modules imported while they wait. */
    preimport: readonly string[];
    /** The pool's key: interpreters started alike share one. */
    key: string;
    /** This sandbox instance: the taker's label. */
    instanceId: string;
    /** Room for one more interpreter under the bounds, or undefined. */
    reserve: (engine: Engine) => Promise<Reservation | undefined>;
    /** The engines (`close()` removes this replica's waiting interpreters there). */
    engines: EngineSet;
  }) {
    this.engines = engines;
    this.options = options;
    this.preimport = preimport;
    this.key = key;
    this.instanceId = instanceId;
    this.reserve = reserve;
  }

  /** Waiting interpreters whose pre-imports are done, at the last look. */
  get readyCount(): number {
    return this.listed.filter(box => box.labels[READY_LABEL] === '1').length;
  }

  private async list(engine: Engine): Promise<BoxInfo[]> {
    this.listed = await engine.driver.list({ kind: 'conversation', pool: this.key, live: true });
    return this.listed;
  }

  private fresh(box: BoxInfo): boolean {
    return Date.now() - box.createdMs < this.options.idleMs - EXPIRY_MARGIN_MS;
  }

  /** A waiting interpreter, claimed and given a fresh secret, or undefined; refills either way. */
  async take(engine: Engine): Promise<PlacedInterpreter | undefined> {
    const candidates = (await this.list(engine).catch(() => []))
      .filter(box => box.state === 'running' && this.fresh(box))
      .sort(
        (a, b) =>
          Number(b.labels[READY_LABEL] === '1') - Number(a.labels[READY_LABEL] === '1') ||
          a.createdMs - b.createdMs,
      );
    try {
      for (const box of candidates) {
        const won = await engine.driver.claim!(box, {
          ...{ [POOL_LABEL]: null, [READY_LABEL]: null },
          [INSTANCE_LABEL]: this.instanceId,
        }).catch(() => false);
        if (!won) continue;
        const secret = randomBytes(16).toString('hex');
        try {
          await sendHello({ driver: engine.driver, id: box.id, secret });
        } catch {
          void engine.remove(box.id);
          continue;
        }
        const placement = box.labels[PLACEMENT_LABEL];
        return { engine, id: box.id, secret, startedAt: box.createdMs, placement };
      }
      return undefined;
    } finally {
      this.fill(engine);
    }
  }

  /** A taken interpreter that could not be used has a secret nobody else knows: it goes. */
  putBack(placed: PlacedInterpreter): void {
    void placed.engine.remove(placed.id);
  }

  /** Tops the cluster's pool up to `warmPoolSize` (one pass at a time, in the background). */
  fill(engine: Engine): void {
    if (this.stop.signal.aborted || this.filling !== undefined || engine.state !== 'up') return;
    this.filling = this.work.track(
      this.fillOnce(engine)
        .catch(() => {})
        .finally(() => (this.filling = undefined)),
    );
  }

  private async fillOnce(engine: Engine): Promise<void> {
    const listed = await this.list(engine);
    const stale = listed.filter(box => !this.fresh(box));
    for (const box of stale) void this.removeClaimed(engine, box);
    const kept = listed.filter(box => !stale.includes(box));
    // Replicas filling at the same moment can overshoot: each removes the same newest surplus.
    const surplus = sortNewestFirst(kept).slice(
      0,
      Math.max(0, kept.length - this.options.warmPoolSize),
    );
    for (const box of surplus) void this.removeClaimed(engine, box);
    const placements = new Set(listed.map(box => box.labels[PLACEMENT_LABEL]));
    const unlisted = [...this.starting].filter(id => !placements.has(id)).length;
    const deficit = this.options.warmPoolSize - kept.length - unlisted;
    for (let i = 0; i < deficit && !this.stop.signal.aborted; i++) {
      const reservation = await this.reserve(engine);
      if (reservation === undefined) return;
      this.work.track(this.startOne(engine, reservation));
    }
  }

  private async startOne(engine: Engine, reservation: Reservation): Promise<void> {
    this.starting.add(reservation.id);
    try {
      const id = await startOnEngine({
        ...{ engine, options: this.options, placement: reservation.id, secret: undefined },
        ...{ labels: { [POOL_LABEL]: this.key }, preimport: this.preimport },
        abortSignal: this.stop.signal,
      });
      await reservation.confirm(id, 0);
      // Ready now (startInterpreter waited for the kernel): say so, unless taken meanwhile.
      const box = (await this.list(engine)).find(found => found.id === id);
      if (box !== undefined) await engine.driver.claim!(box, { [READY_LABEL]: '1' });
    } catch {
      // A failed start leaves nothing behind; conversations start their own meanwhile.
    } finally {
      this.starting.delete(reservation.id);
      reservation.release();
    }
  }

  /** Claims a waiting interpreter (so nobody takes it) and removes it. */
  private async removeClaimed(engine: Engine, box: BoxInfo): Promise<void> {
    const won = await engine.driver.claim!(box, { [POOL_LABEL]: null }).catch(() => false);
    if (won) await engine.remove(box.id);
  }

  /** Stops filling, waits for starts in flight, and claims and removes this replica's own. */
  async close(): Promise<void> {
    this.stop.abort();
    await this.work.settled();
    await Promise.all(
      this.engines.engines.map(async engine => {
        const mine = await engine.driver
          .list({ kind: 'conversation', pool: this.key, instanceId: this.instanceId })
          .catch(() => []);
        await Promise.all(mine.map(box => this.removeClaimed(engine, box)));
      }),
    );
  }
}
