import { WaitQueue } from './wait-queue.ts';

/** A counting semaphore whose waits can be aborted; used to bound concurrent runs. */
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

  /** Rejects every waiter with `reason`. */
  rejectAll(reason: unknown): void {
    this.waiters.rejectAll(reason);
  }
}
