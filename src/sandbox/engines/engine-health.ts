import { backoffDelayMs } from '../../util/backoff-delay.ts';

/**
 * When an engine is probed: every `intervalMs` while it is up; with back-off while it is down
 * (about 250 ms, doubling with jitter, at most `intervalMs`), so a restarted engine is back within seconds and
 * a dead one costs one ping now and then. Probes are coalesced: whoever asks while one is in
 * flight shares its answer. Timers never keep the process alive.
 *
 * @example
 * ```ts
 * const loop = new ProbeLoop({ intervalMs: 5_000, probe: () => engine.ping(), isUp: () => engine.up, afterProbe: async () => {} });
 * loop.start();
 * ```
 */
export class ProbeLoop {
  private timer: NodeJS.Timeout | undefined;
  private probing: Promise<boolean> | undefined;
  private lastEnd = 0;
  private failures = 0;
  private running = false;
  private readonly intervalMs: number;
  private readonly probe: () => Promise<boolean>;
  private readonly isUp: () => boolean;
  private readonly afterProbe: () => Promise<void>;

  constructor({
    intervalMs,
    probe,
    isUp,
    afterProbe,
  }: {
    /** Interval while up, and the longest back-off while down. */
    intervalMs: number;
    /** One probe; resolves with "is up". */
    probe: () => Promise<boolean>;
    /** Whether the engine is up now. */
    isUp: () => boolean;
    /** Runs after each scheduled probe (periodic work such as sweeps). */
    afterProbe: () => Promise<void>;
  }) {
    this.intervalMs = intervalMs;
    this.probe = probe;
    this.isUp = isUp;
    this.afterProbe = afterProbe;
  }

  /** Starts the scheduled probes. */
  start(): void {
    this.running = true;
    this.reschedule();
  }

  /** Stops them and waits for a probe in flight. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.probing;
  }

  /** Probes now (or joins the probe in flight); resolves with "is up". */
  now(): Promise<boolean> {
    this.probing ??= this.probe()
      .then(up => {
        this.failures = up ? 0 : this.failures + 1;
        return up;
      })
      .finally(() => {
        this.probing = undefined;
        this.lastEnd = Date.now();
      });
    return this.probing;
  }

  /** Like `now`, but answers from a probe that ended in the last 200 ms. */
  soon(): Promise<boolean> {
    if (this.probing === undefined && Date.now() - this.lastEnd < 200) {
      return Promise.resolve(this.isUp());
    }
    return this.now();
  }

  /** Plans the next probe from the current state (call after the state changed). */
  reschedule(): void {
    clearTimeout(this.timer);
    if (!this.running) return;
    const delayMs = this.isUp()
      ? this.intervalMs
      : backoffDelayMs({ attempt: this.failures + 1, maxDelayMs: this.intervalMs });
    this.timer = setTimeout(() => void this.tick(), delayMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    await this.now();
    if (this.running) await this.afterProbe();
    this.reschedule();
  }
}
