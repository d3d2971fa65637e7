/** A ranked list from one retrieval channel, best first. */
export type Ranking = readonly { slot: number; score: number }[];

/** The fusion method when none is given. */
export const DEFAULT_FUSION_METHOD = 'zscore';
/**
 * The dense channel's share in `zscore` fusion: chosen on five dev sets for each sixth left out
 * (0.3 in five of the six splits, 0.4 in the sixth), see docs/retrieval.md.
 */
export const ZSCORE_DENSE_WEIGHT = 0.3;

/**
 * How lexical and dense rankings are combined (each measured on the six dev sets with real
 * models, `npm run bench:quality`, every setting chosen on five sets and scored on the sixth):
 * - `zscore` (default): each channel's scores as standard scores over its own candidates
 *   (shifted so its last candidate scores 0), mixed with `denseWeight` (0.3 by default for this
 *   method). Scale-free, so neither channel's absolute scores decide its say; with the lexical
 *   channel at 0.7, a dense channel that knows little (a small model, a catalog of near-duplicate
 *   tools) can only reorder near-ties of the lexical ranking, never displace a clear lexical best.
 *   Learned usage joins its description channel: a learned tool scores the better of its
 *   description and its past requests (`learnedUsage`);
 * - `confidence`: each channel's scores on an absolute scale (BM25 as a share of a full match of
 *   the query, see `LexicalIndex.fullMatchScore`; cosine as it is), mixed with a per-query dense
 *   share: each channel weighs as much as its best candidate matches. The default until
 *   2026-12: it hands the ranking to the dense channel whenever the best cosine is high, which
 *   loses to lexical alone where the model is weak (seal-tools R@5 90.2 -> 83.9);
 * - `convex`: scores normalised over each channel's candidates (BM25 over its maximum, cosine
 *   min-max), mixed with `denseWeight`;
 * - `rrf`: reciprocal-rank fusion, ranks only;
 * - `rerank`: the lexical candidates ordered by their dense similarity (then the dense
 *   channel's own candidates, when the lexical channel found fewer).
 */
export type FusionOptions = {
  method?: 'confidence' | 'convex' | 'rrf' | 'zscore' | 'rerank';
  /**
   * How a tool's learned usage enters a hybrid `zscore` or `confidence` ranking (other methods,
   * and lexical or dense retrieval alone, always mix it into the channels): `terms` in the lexical usage
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
  /** Share of the dense channel, 0..1 (`zscore`: 0.3 unless given; `convex`, `rrf`: 0.5). */
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
  { method = DEFAULT_FUSION_METHOD, denseWeight, rrfK = 60 }: FusionOptions = {},
  lexicalFullMatch = 0,
): { slot: number; score: number }[] {
  if (method === 'zscore') {
    return fuseStandardized({ lexical, dense, denseWeight: denseWeight ?? ZSCORE_DENSE_WEIGHT });
  }
  const weight = denseWeight ?? 0.5;
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
    lexical.forEach(({ slot }, rank) => add(slot, (1 - weight) / (rrfK + rank + 1)));
    dense.forEach(({ slot }, rank) => add(slot, weight / (rrfK + rank + 1)));
  } else if (method === 'rerank') {
    const cosine = new Map(dense.map(({ slot, score }) => [slot, score]));
    const lowest = dense.at(-1)?.score ?? 0;
    // Every lexical candidate (2 + a cosine) ahead of every dense-only one (a cosine).
    lexical.forEach(({ slot }) => add(slot, 2 + (cosine.get(slot) ?? lowest)));
    for (const { slot, score } of dense) if (!scores.has(slot)) add(slot, score);
  } else {
    const lexicalMax = lexical[0]?.score ?? 0;
    if (lexicalMax > 0) {
      for (const { slot, score } of lexical) add(slot, ((1 - weight) * score) / lexicalMax);
    }
    const denseMax = dense[0]?.score ?? 0;
    const denseMin = dense[dense.length - 1]?.score ?? 0;
    const range = denseMax - denseMin;
    for (const { slot, score } of dense) {
      add(slot, weight * (range > 0 ? (score - denseMin) / range : 1));
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

/**
 * `zscore` fusion: each channel's scores as standard scores over its candidates, shifted so that
 * its lowest scores 0 (a candidate one channel lacks counts at that channel's lowest; the lexical
 * channel's candidates are as many as the dense channel's, those it does not list at BM25 0),
 * mixed `1 - denseWeight` to `denseWeight`.
 */
function fuseStandardized({
  lexical,
  dense,
  denseWeight = ZSCORE_DENSE_WEIGHT,
}: {
  /** The lexical channel's ranking (raw BM25F scores). */
  lexical: Ranking;
  /** The dense channel's ranking (cosines). */
  dense: Ranking;
  /** Share of the dense channel, 0..1. */
  denseWeight?: number;
}): { slot: number; score: number }[] {
  const scores = new Map<number, number>();
  const add = (ranking: Ranking, weight: number, scale: (score: number) => number) => {
    for (const { slot, score } of ranking) {
      scores.set(slot, (scores.get(slot) ?? 0) + weight * scale(score));
    }
  };
  // The dense channel scores every tool, so its list is as long as the pool of candidates.
  add(lexical, 1 - denseWeight, standardScale(lexical, Math.max(lexical.length, dense.length)));
  add(dense, denseWeight, standardScale(dense));
  return [...scores]
    .map(([slot, score]) => ({ slot, score }))
    .sort((a, b) => b.score - a.score || a.slot - b.slot);
}

/**
 * A channel's scores as standard scores over its candidates, from 0 at its lowest. `size` counts
 * candidates the ranking leaves out at a score of 0: the lexical channel lists only the tools
 * that share a term with the query, and every other tool's BM25 is truly 0. Without them, a
 * query that matches one tool would give that tool no standard score at all, and one that
 * matches a few would squeeze its clear best against the dense channel's fifty.
 */
function standardScale(ranking: Ranking, size = ranking.length): (score: number) => number {
  if (ranking.length === 0) return () => 0;
  const zeros = Math.max(0, size - ranking.length);
  const count = ranking.length + zeros;
  const mean = ranking.reduce((sum, { score }) => sum + score, 0) / count;
  const squares = ranking.reduce((sum, { score }) => sum + (score - mean) ** 2, 0);
  const deviation = Math.sqrt((squares + zeros * mean ** 2) / count) || 1;
  const lowest = zeros > 0 ? Math.min(0, ranking.at(-1)!.score) : ranking.at(-1)!.score;
  return score => (score - lowest) / deviation;
}
