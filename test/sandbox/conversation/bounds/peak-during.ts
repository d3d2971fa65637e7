// The most of something live at once while work runs, counted over and over until it ends: how
// the bounds tests see that replicas never pass a bound together, whatever engine counts.

/**
 * Runs `work` while `count` is asked again and again; returns its result and the highest count
 * seen (one last count after it ends included).
 *
 * @example
 * const [results, peak] = await peakDuring(async () => (await interpreters(scope)).length, burst);
 */
export async function peakDuring<T>(
  count: () => Promise<number>,
  work: () => Promise<T>,
): Promise<[T, number]> {
  let peak = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) peak = Math.max(peak, await count());
  })();
  try {
    return [await work(), peak];
  } finally {
    sampling = false;
    await sampler;
    peak = Math.max(peak, await count());
  }
}
