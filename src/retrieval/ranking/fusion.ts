/** A ranked list from one retrieval channel, best first. */
export type Ranking = readonly { slot: number; score: number }[];

/**
 * How lexical and dense rankings are combined (each measured on the dev sets with real models,
 * `npm run bench:quality`):
 * - `confidence` (default): each channel's scores on an absolute scale (BM25 as a share of a
 *   full match of the query, see `LexicalIndex.fullMatchScore`; cosine as it is), mixed with a
 *   per-query dense share: each channel weighs as much as its best candidate matches. Learned
 *   usage (learning from use) joins as channels of its own on the same rule (`learnedUsage`);
 * - `convex`: scores normalised over each channel's candidates (BM25 over its maximum, cosine
 *   min-max), mixed with `denseWeight`;
 * - `rrf`: reciprocal-rank fusion, ranks only;
 * - `zscore`: each channel's scores as standard scores over its candidates, added;
 * - `rerank`: the lexical candidates ordered by their dense similarity (then the dense
 *   channel's own candidates, when the lexical channel found fewer).
 */
export type FusionOptions = {
  method?: 'confidence' | 'convex' | 'rrf' | 'zscore' | 'rerank';
  /**
   * How a tool's learned usage enters a hybrid `confidence` ranking (other methods, and lexical
   * or dense retrieval alone, always mix it into the channels): `terms` in the lexical usage
   * field (`'field'`, the default), as a channel of their own (the usage field scored alone),
   * or not at all; `vector` as a channel of its own (the query's cosine with the tool's mean
   * request vector, `'channel'`, the default) or mixed into the tool's dense vector
   * (`'mixed'`). Mixed in, the learned vector is diluted by the description and the fusion
   * cannot see how well past requests match: on dev-multi with learning, hybrid fell below
   * dense alone (R@5 76.3 against 80.7; 86.0 with the vector as a channel). A usage channel's
   * scores are weighed by the tool's evidence, n / (n + 1) for n learned requests (see
   * `UsageChannels`).
   */
  learnedUsage?: { terms?: 'field' | 'channel' | 'none'; vector?: 'channel' | 'mixed' };
  /** Share of the dense channel, 0..1 (`convex`, `rrf`). */
  denseWeight?: number;
  /** RRF's rank constant. */
  rrfK?: number;
};

/**
 * Fuses a lexical and a dense ranking into one, best first. `lexicalFullMatch` is the BM25
 * score a full match of the query would get (`confidence` needs it; see
 * `LexicalIndex.fullMatchScore`). Convex fusion follows Bruch et al., "An Analysis of Fusion
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
  { method = 'confidence', denseWeight = 0.5, rrfK = 60 }: FusionOptions = {},
  lexicalFullMatch = 0,
): { slot: number; score: number }[] {
  const scores = new Map<number, number>();
  const add = (slot: number, value: number): void => {
    scores.set(slot, (scores.get(slot) ?? 0) + value);
  };
  if (method === 'confidence') {
    // Both on a 0..1 scale of how well a tool matches; the better channel leads the mix.
    const lexicalOf = (score: number) =>
      lexicalFullMatch > 0 ? Math.min(1, score / lexicalFullMatch) : 0;
    const l = lexicalOf(lexical[0]?.score ?? 0);
    const d = Math.max(0, dense[0]?.score ?? 0);
    const share = l + d > 0 ? d / (l + d) : 0.5;
    for (const { slot, score } of lexical) add(slot, (1 - share) * lexicalOf(score));
    for (const { slot, score } of dense) add(slot, share * Math.max(0, score));
  } else if (method === 'rrf') {
    lexical.forEach(({ slot }, rank) => add(slot, (1 - denseWeight) / (rrfK + rank + 1)));
    dense.forEach(({ slot }, rank) => add(slot, denseWeight / (rrfK + rank + 1)));
  } else if (method === 'zscore') {
    for (const ranking of [lexical, dense]) {
      const { mean, deviation } = spread(ranking);
      // Candidates one channel lacks count at that channel's lowest.
      const floor = ranking.length > 0 ? (ranking.at(-1)!.score - mean) / deviation : 0;
      for (const { slot, score } of ranking) add(slot, (score - mean) / deviation - floor);
    }
  } else if (method === 'rerank') {
    const cosine = new Map(dense.map(({ slot, score }) => [slot, score]));
    const lowest = dense.at(-1)?.score ?? 0;
    // Every lexical candidate (2 + a cosine) ahead of every dense-only one (a cosine).
    lexical.forEach(({ slot }) => add(slot, 2 + (cosine.get(slot) ?? lowest)));
    for (const { slot, score } of dense) if (!scores.has(slot)) add(slot, score);
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

/**
 * `confidence` over any number of channels, each scored on an absolute 0..1 scale of how well a
 * tool matches (BM25 as a share of a full match, cosines as they are): a channel weighs as much
 * as its best candidate matches. With the lexical and dense channels alone this is
 * `fuseRankings`' `confidence`; learned usage as channels of their own (`learnedUsage`) joins
 * here, so past requests like this one lead when they match better than any description does.
 *
 * @example
 * ```ts
 * fuseConfidence([lexicalShares, dense, usageCosines]);
 * ```
 */
export function fuseConfidence(channels: readonly Ranking[]): { slot: number; score: number }[] {
  const tops = channels.map(ranking => Math.max(0, ranking[0]?.score ?? 0));
  const total = tops.reduce((sum, top) => sum + top, 0);
  const scores = new Map<number, number>();
  channels.forEach((ranking, c) => {
    const weight = total > 0 ? (tops[c] as number) / total : 1 / channels.length;
    for (const { slot, score } of ranking) {
      scores.set(slot, (scores.get(slot) ?? 0) + weight * Math.max(0, score));
    }
  });
  return [...scores]
    .map(([slot, score]) => ({ slot, score }))
    .sort((a, b) => b.score - a.score || a.slot - b.slot);
}

function spread(ranking: Ranking): { mean: number; deviation: number } {
  if (ranking.length === 0) return { mean: 0, deviation: 1 };
  const mean = ranking.reduce((sum, { score }) => sum + score, 0) / ranking.length;
  const variance =
    ranking.reduce((sum, { score }) => sum + (score - mean) ** 2, 0) / ranking.length;
  return { mean, deviation: Math.sqrt(variance) || 1 };
}
