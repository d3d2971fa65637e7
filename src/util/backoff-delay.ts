/**
 * Delay before retry `attempt` (1-based) of anything that reconnects or restarts (MCP
 * reconnects, warm-pool refills, engine probes): exponential from
 * `initialDelayMs`, capped at `maxDelayMs`, with "equal jitter" (half fixed,
 * half random) so many clients restarting together do not retry in lockstep.
 *
 * @example
 * ```ts
 * backoffDelayMs({ attempt: 3, initialDelayMs: 250 }); // between 500 and 1000
 * ```
 */
export function backoffDelayMs({
  attempt,
  initialDelayMs = 250,
  maxDelayMs = 30_000,
  random = Math.random,
}: {
  /** 1 for the first retry. */
  attempt: number;
  /** Delay scale of the first retry. */
  initialDelayMs?: number;
  /** Cap of any delay. */
  maxDelayMs?: number;
  /** Source of jitter in [0, 1); injectable for tests. */
  random?: () => number;
}): number {
  const exponential = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exponential / 2 + (random() * exponential) / 2);
}
