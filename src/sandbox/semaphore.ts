/** A counting semaphore whose waits can be aborted; used to bound concurrent runs. */
export class Semaphore {
  private available: number;
  private readonly waiters: Array<{ grant: () => void; fail: (reason: unknown) => void }> = [];

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
    await new Promise<void>((resolve, reject) => {
      const waiter = {
        grant: () => {
          abortSignal?.removeEventListener('abort', onAbort);
          resolve();
        },
        fail: (reason: unknown) => {
          abortSignal?.removeEventListener('abort', onAbort);
          reject(reason);
        },
      };
      const onAbort = () => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(abortSignal?.reason);
      };
      abortSignal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
    return this.releaser();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next !== undefined) next.grant();
      else this.available++;
    };
  }

  /** Rejects every waiter with `reason`. */
  rejectAll(reason: unknown): void {
    for (const waiter of this.waiters.splice(0)) waiter.fail(reason);
  }
}
