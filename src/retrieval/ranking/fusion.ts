/** A ranked list from one retrieval channel, best first. */
export type Ranking = readonly { slot: number; score: number }[];

/**
 * How lexical and dense rankings are combined. `convex` (default) mixes
 * normalised scores, which keeps a strong channel from being dragged down by a
 * weak one; `rrf` (reciprocal-rank fusion) uses ranks only.
 */
export type FusionOptions = {
  /** `convex` or `rrf`. */
  method?: 'convex' | 'rrf';
  /** Share of the dense channel, 0..1. */
  denseWeight?: number;
  /** RRF's rank constant. */
  rrfK?: number;
};

/**
 * Fuses a lexical and a dense ranking into one, best first. Convex fusion
 * normalises BM25 by its maximum (its theoretical minimum is 0) and cosine by
 * min-max over the candidates, as in Bruch et al., "An Analysis of Fusion
 * Functions for Hybrid Retrieval" (2023).
 *
 * @example
 * ```ts
 * fuseRankings(lexical, dense, { method: 'convex', denseWeight: 0.5 });
 * ```
 */
export function fuseRankings(
  lexical: Ranking,
  dense: Ranking,
  { method = 'convex', denseWeight = 0.5, rrfK = 60 }: FusionOptions = {},
): { slot: number; score: number }[] {
  const scores = new Map<number, number>();
  const add = (slot: number, value: number): void => {
    scores.set(slot, (scores.get(slot) ?? 0) + value);
  };
  if (method === 'rrf') {
    lexical.forEach(({ slot }, rank) => add(slot, (1 - denseWeight) / (rrfK + rank + 1)));
    dense.forEach(({ slot }, rank) => add(slot, denseWeight / (rrfK + rank + 1)));
  } else {
    const lexicalMax = lexical[0]?.score ?? 0;
    if (lexicalMax > 0) {
      for (const { slot, score } of lexical) add(slot, ((1 - denseWeight) * score) / lexicalMax);
    }
    const denseMax = dense[0]?.score ?? 0;
    const denseMin = dense[dense.length - 1]?.score ?? 0;
    const range = denseMax - denseMin;
    for (const { slot, score } of dense) {
      add(slot, denseWeight * (range > 0 ? (score - denseMin) / range : 1));
    }
  }
  return [...scores]
    .map(([slot, score]) => ({ slot, score }))
    .sort((a, b) => b.score - a.score || a.slot - b.slot);
}
