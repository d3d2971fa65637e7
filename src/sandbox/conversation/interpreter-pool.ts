import { randomBytes } from 'node:crypto';
import type { Engine } from '../engines/engine.ts';
import { PendingWork } from '../../util/pending-work.ts';
import type { ResolvedConversationOptions } from '../options/conversation-options.ts';
import { startOnEngine } from './interpreter-container.ts';
import type { PlacedInterpreter } from './interpreter-placement.ts';
import type { Reservation } from './bounds/placement-gate.ts';

/** How long before its idle expiry a waiting interpreter is no longer handed out. */
const EXPIRY_MARGIN_MS = 30_000;

/**
 * Started interpreters waiting for a conversation, per engine (`warmPoolSize` each): a new
 * conversation's first cell skips the container start and the pre-imports (seconds under
 * gVisor), as one-shot runs skip them with the warm pool. A waiting interpreter belongs to
 * no one: it is bound to a conversation when taken (its secret goes into that conversation's
 * sealed handle). A waiting one is replaced shortly before its idle expiry, so the pool stays
 * warm through quiet hours; it starts one only while the engines have room under
 * `maxInterpreters` and `maxPerEngine`, and within `maxConcurrentStarts` (`reserve`).
 *
 * @example
 * ```ts
 * const pool = new InterpreterPool({ options, preimport, reserve: engine => gate.reserve({ engine, ifRoom: true }) });
 * const warm = await pool.take(engine); // undefined: start one
 * ```
 */
export class InterpreterPool {
  private readonly options: ResolvedConversationOptions;
  private readonly preimport: readonly string[];
  private readonly waiting = new Map<Engine, PlacedInterpreter[]>();
  /** Starts in flight per engine, oldest first. */
  private readonly inFlight = new Map<Engine, Promise<void>[]>();
  private readonly starts = new PendingWork();
  private readonly stop = new AbortController();
  private readonly reserve: (engine: Engine) => Promise<Reservation | undefined>;
  /** Replacement timers of waiting interpreters, cleared on close. */
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();

  constructor({
    options,
    preimport,
    reserve,
  }: {
    /** `warmPoolSize`, limits and idle expiry of interpreters. */
    options: ResolvedConversationOptions;
    /** Modules imported while they wait. */
    preimport: readonly string[];
    /** Whether `engine` has room for one more interpreter under the bounds. */
    reserve: (engine: Engine) => Promise<Reservation | undefined>;
  }) {
    this.options = options;
    this.preimport = preimport;
    this.reserve = reserve;
  }

  /**
   * A live waiting interpreter on `engine` (waiting for one that is starting, if none is ready),
   * or undefined; starts a replacement either way. Interpreters too close to their idle expiry,
   * or that died, are removed on the way.
   */
  async take(engine: Engine): Promise<PlacedInterpreter | undefined> {
    const list = this.waiting.get(engine) ?? [];
    // One already starting is ready sooner than one started now.
    const inFlight = this.inFlight.get(engine) ?? [];
    if (list.length === 0 && inFlight.length > 0) await inFlight[0];
    let found: PlacedInterpreter | undefined;
    while (found === undefined && list.length > 0) {
      const candidate = list.shift()!;
      const fresh = Date.now() - candidate.startedAt < this.options.idleMs - EXPIRY_MARGIN_MS;
      if (fresh && engine.state === 'up' && (await this.running(candidate))) found = candidate;
      else void engine.remove(candidate.id);
    }
    this.fill(engine);
    return found;
  }

  /** Returns a taken interpreter that could not be given to its conversation (first in line again). */
  putBack(placed: PlacedInterpreter): void {
    const list = this.waiting.get(placed.engine);
    if (list === undefined || this.stop.signal.aborted) void placed.engine.remove(placed.id);
    else list.unshift(placed);
  }

  /** Interpreters started and ready, waiting for a conversation, over all engines. */
  get readyCount(): number {
    let count = 0;
    for (const list of this.waiting.values()) count += list.length;
    return count;
  }

  /** Starts interpreters until `engine` has `warmPoolSize` waiting or starting. */
  fill(engine: Engine): void {
    const size = this.options.warmPoolSize;
    const list = this.waiting.get(engine) ?? [];
    this.waiting.set(engine, list);
    const inFlight = this.inFlight.get(engine) ?? [];
    this.inFlight.set(engine, inFlight);
    while (
      !this.stop.signal.aborted &&
      engine.state === 'up' &&
      list.length + inFlight.length < size
    ) {
      const start = this.starts.track(this.startOne(engine, list));
      inFlight.push(start);
      void start.then(() => inFlight.splice(inFlight.indexOf(start), 1));
    }
  }

  private async startOne(engine: Engine, list: PlacedInterpreter[]): Promise<void> {
    const secret = randomBytes(16).toString('hex');
    let reservation: Reservation | undefined;
    try {
      // A full engine keeps its room for conversations; the next take() tries again.
      reservation = await this.reserve(engine);
      if (reservation === undefined) return;
      const id = await startOnEngine({
        ...{ engine, options: this.options, placement: reservation.id, secret },
        ...{ preimport: this.preimport, abortSignal: this.stop.signal },
      });
      await reservation.confirm(id, 0);
      const placed = {
        engine,
        id,
        secret,
        startedAt: Date.now(),
        placement: reservation.id,
      };
      if (this.stop.signal.aborted) void engine.remove(id);
      else {
        list.push(placed);
        this.replaceBeforeExpiry(engine, list, placed);
      }
    } catch {
      // A start that failed leaves nothing behind (startInterpreter removes it); the next
      // conversation starts its own interpreter and sees the error, if it persists.
    } finally {
      reservation?.release();
    }
  }

  /** Swaps a still-waiting interpreter for a new one before take() would have to refuse it. */
  private replaceBeforeExpiry(
    engine: Engine,
    list: PlacedInterpreter[],
    placed: PlacedInterpreter,
  ): void {
    // With an idle expiry this short a replacement would start every few seconds: let it end.
    if (this.options.idleMs <= 2 * EXPIRY_MARGIN_MS) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const at = list.indexOf(placed);
      if (at < 0 || this.stop.signal.aborted) return;
      list.splice(at, 1);
      void engine.remove(placed.id);
      this.fill(engine);
    }, this.options.idleMs - EXPIRY_MARGIN_MS);
    timer.unref?.();
    this.timers.add(timer);
  }

  private async running(candidate: PlacedInterpreter): Promise<boolean> {
    try {
      return (await candidate.engine.driver.state(candidate.id))?.running === true;
    } catch {
      return false;
    }
  }

  /** Stops filling, waits for starts in flight and removes every waiting interpreter. */
  async close(): Promise<void> {
    this.stop.abort();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await this.starts.settled();
    for (const [engine, list] of this.waiting) {
      for (const placed of list.splice(0)) void engine.remove(placed.id);
    }
  }
}
