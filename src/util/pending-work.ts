/**
 * Work started in the background that a `close()` must wait for (removals, pool starts,
 * disposals): `track` a promise, `settled()` waits until nothing tracked is in flight,
 * including work tracked while it waits. Rejections are the tracked code's own business;
 * `settled()` never rejects.
 *
 * @example
 * ```ts
 * const work = new PendingWork();
 * work.track(container.remove());
 * await work.settled();
 * ```
 */
export class PendingWork {
  private readonly pending = new Set<Promise<unknown>>();

  /** Tracks `promise` until it settles; returns it unchanged. */
  track<T>(promise: Promise<T>): Promise<T> {
    this.pending.add(promise);
    const forget = () => this.pending.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  /** Promises in flight. */
  get size(): number {
    return this.pending.size;
  }

  /** Resolves once nothing tracked is in flight. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}
