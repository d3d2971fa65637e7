import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';

/** Cache-stable selection: `'fresh'` (a new top-k per request) or `'sticky'`. */
export type Stability =
  | 'fresh'
  | 'sticky'
  | {
      mode: 'sticky';
      /** Most retrieval seats a kept set may grow to before it is replaced (default 2 x topK). */
      maxSeats?: number;
      /** A message of at most this many content words is read as a follow-up of the previous one. */
      followUpWords?: number;
    };

/** What sticky selection did with the previous tool set. */
export type StickyOutcome = 'kept' | 'grown' | 'replaced';

/**
 * Retrieval's seats under sticky selection: the previous call's seats when
 * they hold every leading hit of the new request (its best tool, and each
 * need's best); else those seats plus the missing fresh top-k (or at least the
 * missing leaders) when that fits in `maxSeats`; else the fresh top-k. Keeping the set keeps the tool list, the
 * first thing in a provider's cached prompt prefix, byte-identical.
 *
 * @example
 * ```ts
 * stickySeats({ previous: ['get_weather'], fresh: ['get_forecast', 'get_weather'], leaders: ['get_weather'], maxSeats: 10 });
 * // { seats: ['get_weather'], outcome: 'kept' }
 * ```
 */
export function stickySeats({
  previous,
  fresh,
  leaders,
  maxSeats,
}: {
  /** The previous call's seats that the call still offers. */
  previous: readonly string[];
  /** The fresh top-k, best first. */
  fresh: readonly string[];
  /** The leading hits among `fresh` (the request's and each need's best). */
  leaders: readonly string[];
  /** Cap on the grown set. */
  maxSeats: number;
}): { seats: string[]; outcome: StickyOutcome } {
  if (previous.length === 0) return { seats: [...fresh], outcome: 'replaced' };
  const kept = new Set(previous);
  if (leaders.every(name => kept.has(name))) return { seats: [...previous], outcome: 'kept' };
  // The list changes anyway: append the whole fresh top-k when it fits, else just the leaders.
  for (const missing of [fresh, leaders].map(names => names.filter(name => !kept.has(name)))) {
    if (previous.length + missing.length <= maxSeats)
      return { seats: [...previous, ...missing], outcome: 'grown' };
  }
  return { seats: [...fresh], outcome: 'replaced' };
}

/** Checks `stability` and fills in its defaults; undefined for `'fresh'`. */
export function stickyOptions(
  stability: Stability,
  topK: number,
): { maxSeats: number; followUpWords: number } | undefined {
  if (stability === 'fresh') return undefined;
  const options = stability === 'sticky' ? { mode: 'sticky' as const } : stability;
  if (options == null || options.mode !== 'sticky') {
    throw new InvalidArgumentError({
      argument: 'stability',
      value: stability,
      message: `expected 'fresh', 'sticky' or { mode: 'sticky', maxSeats?, followUpWords? }`,
    });
  }
  const { maxSeats = 2 * topK, followUpWords = 3 } = options;
  if (!Number.isInteger(maxSeats) || maxSeats < topK) {
    throw new InvalidArgumentError({
      argument: 'stability.maxSeats',
      value: maxSeats,
      message: `expected an integer >= topK (${topK})`,
    });
  }
  return { maxSeats, followUpWords };
}
