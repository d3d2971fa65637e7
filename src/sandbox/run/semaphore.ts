import { WaitQueue } from './wait-queue.ts';

/**
 * A counting semaphore whose waits can be aborted: bounds conversation interpreters starting at
 * once (each start costs seconds of CPU under gVisor).
 *
 * @example
 * ```ts
 * const release = await starts.acquire(abortSignal);
 * try { await start(); } finally { release(); }
 * ```
 */
export class Semaphore {
  private available: number;
  private readonly waiters = new WaitQueue<void>();

  constructor({ permits }: { /** How many holders at once. */ permits: number }) {
    this.available = permits;
  }

  /** Resolves with a release function once a permit is free. */
  async acquire(abortSignal?: AbortSignal): Promise<() => void> {
    abortSignal?.throwIfAborted();
    if (this.available > 0) {
      this.available--;
      return this.releaser();
    }
    await this.waiters.wait(abortSignal);
    return this.releaser();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // A waiter takes the permit over; otherwise it goes back.
      if (!this.waiters.resolveNext(undefined)) this.available++;
    };
  }
}
