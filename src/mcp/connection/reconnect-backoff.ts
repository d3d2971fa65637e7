import { setTimeout as delay } from 'node:timers/promises';
import { backoffDelayMs } from '../../util/backoff-delay.ts';

/** A server's reconnect policy. */
export type ReconnectPolicy = { initialDelayMs: number; maxDelayMs: number; maxAttempts: number };

/**
 * The reconnect attempts of one server: a growing (jittered) delay before
 * each, counted across attempts (`status().attempts`) until a connect
 * succeeds and `reset()`s the count, and no more than `maxAttempts`.
 * Internal to `McpServerConnection`.
 *
 * @example
 * ```ts
 * const backoff = new ReconnectBackoff({ policy: { initialDelayMs: 500, maxDelayMs: 30_000, maxAttempts: 10 } });
 * const outcome = await backoff.run({ signal, onWait, attempt: connect, onFailure: () => 'retry' });
 * ```
 */
export class ReconnectBackoff {
  private policy: ReconnectPolicy;
  private count = 0;

  constructor({ policy }: { /** Delays and the attempt limit. */ policy: ReconnectPolicy }) {
    this.policy = policy;
  }

  /** Attempts made since the last success or `reset()`. */
  get attempts(): number {
    return this.count;
  }

  /** Starts counting again (after a success, or before a fresh start). */
  reset(): void {
    this.count = 0;
  }

  /**
   * Waits, then tries `attempt`, until it succeeds or `onFailure` says `stop`
   * (`ended`), or the attempts run out (`exhausted`). An abort of `signal`
   * during a wait counts as a failure of that attempt.
   */
  async run({
    signal,
    onWait,
    attempt,
    onFailure,
  }: {
    /** Aborts the wait (the connection closed). */
    signal: AbortSignal;
    /** Told before each wait. */
    onWait: (attempt: number, delayMs: number) => void;
    /** One reconnect. */
    attempt: () => Promise<void>;
    /** Decides whether to go on after a failed attempt. */
    onFailure: (error: unknown) => Promise<'retry' | 'stop'>;
  }): Promise<'ended' | 'exhausted'> {
    const { initialDelayMs, maxDelayMs, maxAttempts } = this.policy;
    while (this.count < maxAttempts) {
      const attemptNumber = ++this.count;
      const delayMs = backoffDelayMs({ attempt: attemptNumber, initialDelayMs, maxDelayMs });
      onWait(attemptNumber, delayMs);
      try {
        await delay(delayMs, undefined, { signal });
        await attempt();
        return 'ended';
      } catch (error) {
        if ((await onFailure(error)) === 'stop') return 'ended';
      }
    }
    return 'exhausted';
  }
}
