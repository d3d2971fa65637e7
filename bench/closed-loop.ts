/** What {@link closedLoop} measured. */
export type ClosedLoopResult = {
  /** Runs completed per second inside the window. */
  perSec: number;
  /** Runs completed inside the window. */
  runs: number;
  /** The window, ms. */
  windowMs: number;
  /** Runs completed before the window (warm-up). */
  warmupRuns: number;
};

/**
 * Throughput of `callers` loops each calling `run` back to back, in steady state: the clock
 * starts at the `warmupRuns`-th completion, so whatever was prepared before the loop began
 * (a full warm pool) is used up before it, and counts completions for `seconds` from there.
 * The sandbox and its engine floor are both timed by this, the same way.
 *
 * @example
 * ```ts
 * const { perSec } = await closedLoop({ callers: 4, warmupRuns: 8, seconds: 10, run: () => sandbox.execute('print(1)') });
 * ```
 */
export async function closedLoop({
  callers,
  warmupRuns,
  seconds,
  run,
}: {
  /** Loops at once. */
  callers: number;
  /** Completions before the window opens. */
  warmupRuns: number;
  /** Length of the window. */
  seconds: number;
  /** One run; its promise settles when the caller would have its result. */
  run: () => Promise<unknown>;
}): Promise<ClosedLoopResult> {
  const windowMs = seconds * 1000;
  let completed = 0;
  let opened: number | undefined;
  let counted = 0;
  let done = false;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (!done) {
        await run();
        const now = performance.now();
        completed++;
        if (opened === undefined) {
          if (completed === warmupRuns) opened = now;
        } else if (now <= opened + windowMs) {
          counted++;
        } else {
          done = true;
        }
      }
    }),
  );
  return { perSec: counted / (windowMs / 1000), runs: counted, windowMs, warmupRuns };
}
