import { SandboxBusyError } from '../../errors/sandbox-busy-error.ts';
import { SandboxUnavailableError } from '../../errors/sandbox-unavailable-error.ts';
import type { Engine } from './engine.ts';
import { WaitQueue } from '../run/wait-queue.ts';
import { queued, recordEngineState } from '../../telemetry/sandbox-telemetry.ts';

/**
 * Places work on engines. A run takes a slot on the healthy engine with the fewest runs in
 * flight (ties: more idle warm containers, then round robin), at most `maxPerEngine` per
 * engine; when every healthy engine is full, it waits in one FIFO queue for the next free
 * slot on any of them, which holds at most `maxQueued` callers (past it: `SandboxBusyError`). When no engine is healthy, the down ones get one quick probe (so a
 * one-engine app recovers as soon as dockerd is back) before the caller gets the error.
 */
export class EngineSet {
  readonly engines: Engine[];
  private readonly waiters = new WaitQueue<Engine>();
  private readonly maxPerEngine: number;
  private readonly maxQueued: number;
  private turn = 0;

  constructor({
    engines,
    maxPerEngine,
    maxQueued = Number.POSITIVE_INFINITY,
  }: {
    /** The engines, in the order given. */
    engines: Engine[];
    /** Runs in flight per engine. */
    maxPerEngine: number;
    /** Callers that may wait for a slot at once. */
    maxQueued?: number;
  }) {
    this.engines = engines;
    this.maxPerEngine = maxPerEngine;
    this.maxQueued = maxQueued;
  }

  /** Callers waiting for a slot now. */
  get queued(): number {
    return this.waiters.length;
  }

  /** To be called when an engine goes up or down. */
  onStateChange(engine: Engine): void {
    recordEngineState({ engine: engine.name, state: engine.state });
    if (engine.state === 'up') this.dispatch();
    else if (!this.anyUp()) this.waiters.rejectAll(this.unavailable());
  }

  private anyUp(): boolean {
    return this.engines.some(engine => engine.state === 'up');
  }

  private pick(
    load: (engine: Engine) => number,
    avoid?: ReadonlySet<Engine>,
    full: (engine: Engine) => boolean = () => false,
  ): Engine | undefined {
    const count = this.engines.length;
    let best: Engine | undefined;
    for (let k = 0; k < count; k++) {
      const engine = this.engines[(this.turn + k) % count]!;
      if (engine.state !== 'up' || full(engine)) continue;
      if (best === undefined) {
        best = engine;
        continue;
      }
      const avoided = avoid?.has(engine) ?? false;
      if (avoided !== (avoid?.has(best) ?? false)) {
        if (!avoided) best = engine;
        continue;
      }
      const diff = load(engine) - load(best);
      if (diff < 0 || (diff === 0 && engine.warmCount > best.warmCount)) best = engine;
    }
    if (best !== undefined) this.turn = (this.engines.indexOf(best) + 1) % count;
    return best;
  }

  private pickForRun(avoid?: ReadonlySet<Engine>): Engine | undefined {
    return this.pick(
      engine => engine.inFlight,
      avoid,
      engine => engine.inFlight >= this.maxPerEngine,
    );
  }

  /** Probes the down engines once if none is up; false when still none is. */
  private async recover(abortSignal?: AbortSignal): Promise<boolean> {
    if (this.anyUp()) return true;
    await Promise.all(
      this.engines.map(engine => (engine.state === 'down' ? engine.probeSoon() : undefined)),
    );
    abortSignal?.throwIfAborted();
    return this.anyUp();
  }

  /**
   * Takes a run slot on an engine (preferring engines not in `avoid`), waiting in line when
   * all healthy engines are full. Give the slot back with `release`.
   */
  async acquire(abortSignal: AbortSignal, avoid?: ReadonlySet<Engine>): Promise<Engine> {
    abortSignal.throwIfAborted();
    for (let probed = false; ; probed = true) {
      const engine = this.pickForRun(avoid);
      if (engine !== undefined) {
        engine.inFlight++;
        return engine;
      }
      if (this.anyUp()) {
        if (this.waiters.length >= this.maxQueued) {
          throw new SandboxBusyError({ resource: 'runs', limit: this.maxQueued });
        }
        return queued(this.waiters.wait(abortSignal));
      }
      if (probed || !(await this.recover(abortSignal))) throw this.unavailable();
    }
  }

  /** Gives a run slot back; the next caller in line gets it. */
  release(engine: Engine): void {
    engine.inFlight--;
    this.dispatch();
  }

  private dispatch(): void {
    while (this.waiters.length > 0) {
      const engine = this.pickForRun();
      if (engine === undefined) return;
      engine.inFlight++;
      if (!this.waiters.resolveNext(engine)) {
        engine.inFlight--;
        return;
      }
    }
  }

  /** The healthy engine with the least work for a new session (no run slot is taken). */
  async pickForSession(avoid: ReadonlySet<Engine>): Promise<Engine> {
    await this.recover();
    const engine = this.pick(candidate => candidate.inFlight + candidate.sessions, avoid);
    if (engine === undefined) throw this.unavailable();
    return engine;
  }

  /** Fails every caller waiting for a slot. */
  rejectAll(reason: unknown): void {
    this.waiters.rejectAll(reason);
  }

  /** The error when no engine can take work: the engine's own with one engine, else `no-engine`. */
  unavailable(): unknown {
    if (this.engines.length === 1) return this.engines[0]!.unavailable();
    const errors = this.engines.map(engine => engine.unavailable());
    const detail = this.engines
      .map((engine, i) => `${engine.name}: ${(errors[i] as Error).message ?? String(errors[i])}`)
      .join('; ');
    return new SandboxUnavailableError({
      reason: 'no-engine',
      engine: this.engines.map(engine => engine.name).join(', '),
      message: `None of the ${this.engines.length} Docker engines can run code. ${detail}`,
      cause: new AggregateError(errors, 'every engine failed'),
    });
  }
}
