/**
 * A timeout that can be paused: a tool call's `callTimeoutMs` counts the
 * server's time, not the minutes a person spends answering the server's
 * elicitation form in the middle of the call.
 *
 * @example
 * ```ts
 * const deadline = new CallDeadline({ timeoutMs: 60_000, onExpire: () => controller.abort() });
 * deadline.pause(); // a form is open
 * deadline.resume();
 * deadline.clear();
 * ```
 */
export class CallDeadline {
  private remainingMs: number;
  private startedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private onExpire: () => void;
  private done = false;

  constructor({
    timeoutMs,
    onExpire,
    paused = false,
  }: {
    /** Running time allowed. */
    timeoutMs: number;
    /** Called once when it runs out. */
    onExpire: () => void;
    /** Start paused. */
    paused?: boolean;
  }) {
    this.remainingMs = timeoutMs;
    this.onExpire = onExpire;
    if (!paused) this.resume();
  }

  pause(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.remainingMs -= performance.now() - this.startedAt;
  }

  resume(): void {
    if (this.done || this.timer !== undefined) return;
    this.startedAt = performance.now();
    this.timer = setTimeout(
      () => {
        this.done = true;
        this.timer = undefined;
        this.onExpire();
      },
      Math.max(0, this.remainingMs),
    );
  }

  clear(): void {
    this.done = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
