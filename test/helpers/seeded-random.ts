/**
 * A seeded generator (mulberry32) for randomized tests: the same seed gives the same cases on
 * every run, and its low bits are as random as its high ones.
 *
 * @example
 * ```ts
 * const random = seededRandom(7);
 * random(40); // an integer in 0..39
 * ```
 */
export function seededRandom(seed: number): (n: number) => number {
  let state = seed;
  return n => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
}
