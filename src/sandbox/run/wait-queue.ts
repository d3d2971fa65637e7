/**
 * A FIFO of callers waiting for a value, each wait abortable: an abort takes
 * the caller out of the queue and rejects with the signal's reason. Shared
 * by the engine set's run queue and the warm pool.
 *
 * @example
 * ```ts
 * const queue = new WaitQueue<number>();
 * const value = queue.wait(abortSignal); // elsewhere: queue.resolveNext(42)
 * ```
 */
export class WaitQueue<T> {
  private readonly waiters: { resolve: (value: T) => void; reject: (reason: unknown) => void }[] =
    [];

  /** Callers waiting now. */
  get length(): number {
    return this.waiters.length;
  }

  /** Waits for {@link resolveNext} to reach this caller. */
  wait(abortSignal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(abortSignal?.reason);
      };
      const waiter = {
        resolve: (value: T) => {
          abortSignal?.removeEventListener('abort', onAbort);
          resolve(value);
        },
        reject: (reason: unknown) => {
          abortSignal?.removeEventListener('abort', onAbort);
          reject(reason);
        },
      };
      abortSignal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Hands `value` to the longest waiter; false when nobody waits. */
  resolveNext(value: T): boolean {
    const waiter = this.waiters.shift();
    waiter?.resolve(value);
    return waiter !== undefined;
  }

  /** Fails the longest waiter; false when nobody waits. */
  rejectNext(reason: unknown): boolean {
    const waiter = this.waiters.shift();
    waiter?.reject(reason);
    return waiter !== undefined;
  }

  /** Fails every waiter. */
  rejectAll(reason: unknown): void {
    for (const waiter of this.waiters.splice(0)) waiter.reject(reason);
  }
}
