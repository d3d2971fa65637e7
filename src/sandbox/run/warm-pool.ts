import type { CleanupTracker } from '../driver/cleanup-tracker.ts';
import type { SandboxContainer } from './sandbox-container.ts';
import { WaitQueue } from './wait-queue.ts';
import { backoffDelayMs } from '../../util/backoff-delay.ts';
import { PendingWork } from '../../util/pending-work.ts';

/**
 * Keeps `size` one-use containers started and waiting for code, and hands them out in
 * FIFO order. Starts run in the background with at most `maxConcurrentStarts` at once;
 * a caller that finds the pool empty waits for the next start (which is queued for it).
 * Idle containers older than `maxAgeMs`, or that died, are replaced. `close()` removes
 * idle containers and waits for in-flight starts, removing what they produce.
 */
export class WarmPool {
  private readonly idle: SandboxContainer[] = [];
  private readonly waiters = new WaitQueue<SandboxContainer>();
  private starting = 0;
  /** Starts made for callers already waiting: those skip the pre-imports. */
  private startingForWaiters = 0;
  private closed = false;
  private closedReason: unknown;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly ageTimer: NodeJS.Timeout;
  private readonly startsDone = new PendingWork();
  private readonly size: number;
  private readonly maxConcurrentStarts: number;
  private readonly maxAgeMs: number;
  private readonly start: (options: { preimport: boolean }) => Promise<SandboxContainer>;
  private readonly cleanup: CleanupTracker;

  constructor({
    size,
    maxConcurrentStarts,
    maxAgeMs,
    start,
    cleanup,
  }: {
    /** Idle containers to keep ready (0 makes every run cold). */
    size: number;
    /** Container starts in flight at once. */
    maxConcurrentStarts: number;
    /** Idle containers older than this are replaced. */
    maxAgeMs: number;
    /**
     * Starts one container; `preimport` is false when a caller already waits for it (a cold
     * run should not wait for imports its code may not need).
     */
    start: (options: { preimport: boolean }) => Promise<SandboxContainer>;
    /** Removes discarded containers. */
    cleanup: CleanupTracker;
  }) {
    this.size = size;
    this.maxConcurrentStarts = maxConcurrentStarts;
    this.maxAgeMs = maxAgeMs;
    this.start = start;
    this.cleanup = cleanup;
    this.ageTimer = setInterval(
      () => this.recycle(),
      Math.max(1_000, Math.min(maxAgeMs / 4, 30_000)),
    );
    this.ageTimer.unref();
  }

  /** Starts filling the pool. */
  fill(): void {
    this.pump();
  }

  /** Hands out a started container; waits for one if none is idle. */
  acquire(abortSignal?: AbortSignal): Promise<SandboxContainer> {
    if (this.closed) return Promise.reject(this.closedReason);
    this.discardStale();
    // Oldest first, but one whose pre-imports are done before one still importing.
    const index = Math.max(
      0,
      this.idle.findIndex(container => container.ready),
    );
    const [ready] = this.idle.splice(index, 1);
    if (ready !== undefined) {
      this.pump();
      return Promise.resolve(ready);
    }
    const container = this.waiters.wait(abortSignal);
    this.pump();
    return container;
  }

  /** Starts containers until idle + starting covers the pool size and the waiters. */
  private pump(): void {
    if (this.closed) return;
    // While backing off after failures, start only for callers who are waiting.
    const target = (this.retryTimer === undefined ? this.size : 0) + this.waiters.length;
    while (this.starting < this.maxConcurrentStarts && this.idle.length + this.starting < target) {
      this.starting++;
      const forWaiter = this.waiters.length > this.startingForWaiters;
      if (forWaiter) this.startingForWaiters++;
      const settled = () => {
        if (forWaiter) this.startingForWaiters--;
      };
      const done = this.start({ preimport: !forWaiter }).then(
        container => {
          settled();
          this.onStarted(container);
        },
        (error: unknown) => {
          settled();
          this.onFailed(error);
        },
      );
      this.startsDone.track(done);
    }
  }

  private onStarted(container: SandboxContainer): void {
    this.starting--;
    this.failures = 0;
    if (this.closed) {
      container.discard(this.cleanup);
      return;
    }
    // A pre-importing container goes to the pool, not to a caller already covered by a cold
    // start (which skips imports the code may not need).
    const coveredByColdStarts =
      container.preimported && this.waiters.length <= this.startingForWaiters;
    if (coveredByColdStarts || !this.waiters.resolveNext(container)) this.idle.push(container);
    this.pump();
  }

  private onFailed(error: unknown): void {
    this.starting--;
    if (this.closed) return;
    // Someone is waiting: they get the error (it is an infrastructure failure).
    if (this.waiters.rejectNext(error)) {
      this.pump();
      return;
    }
    // Background refill failed with nobody waiting: back off instead of spinning.
    this.failures++;
    const delayMs = backoffDelayMs({ attempt: this.failures, initialDelayMs: 1_000 });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.pump();
    }, delayMs);
    this.retryTimer.unref();
  }

  /** Replaces idle containers that died or grew too old. */
  private recycle(): void {
    this.discardStale();
    this.pump();
  }

  private discardStale(): void {
    const now = Date.now();
    for (let i = this.idle.length - 1; i >= 0; i--) {
      const container = this.idle[i]!;
      if (!container.alive || now - container.startedAt > this.maxAgeMs) {
        this.idle.splice(i, 1);
        container.discard(this.cleanup);
      }
    }
  }

  /** Number of idle, started containers. */
  get idleCount(): number {
    return this.idle.length;
  }

  /** Number of idle containers whose pre-imports are done. */
  get readyCount(): number {
    return this.idle.filter(container => container.ready).length;
  }

  /** Stops refilling, removes idle containers, fails waiters, and waits for starts in flight. */
  async close(reason: unknown): Promise<void> {
    this.closed = true;
    this.closedReason = reason;
    clearInterval(this.ageTimer);
    clearTimeout(this.retryTimer);
    for (const container of this.idle.splice(0)) container.discard(this.cleanup);
    this.waiters.rejectAll(reason);
    await this.startsDone.settled();
  }
}
