/**
 * When a server's tools are listed again: after `list_changed`, debounced so
 * a burst causes one re-list, and on demand; a request arriving while a
 * listing runs is followed by one fresh listing (never two in parallel).
 *
 * @example
 * ```ts
 * const relists = new RelistScheduler({ debounceMs: 50, run: () => listOnce() });
 * relists.notify(); // list_changed
 * await relists.now();
 * ```
 */
export class RelistScheduler {
  private debounceMs: number;
  private run: () => Promise<void>;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;

  constructor({
    debounceMs,
    run,
  }: {
    /** Wait after a notification so a burst causes one listing. */
    debounceMs: number;
    /** One full listing (handles its own errors). */
    run: () => Promise<void>;
  }) {
    this.debounceMs = debounceMs;
    this.run = run;
  }

  /** A `list_changed` arrived. */
  notify(): void {
    // Throttle: the first notification of a burst schedules one re-list; later ones join it.
    if (this.timer !== undefined) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.now();
    }, this.debounceMs);
  }

  /** Lists now (a listing already running is followed by a fresh one). */
  now(): Promise<void> {
    if (this.running !== undefined) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.run();
      } while (this.again);
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Drops a scheduled listing. */
  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
