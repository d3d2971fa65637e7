import { normalized } from '../dense/vector-math.ts';
import type { LexicalIndex, ScoredFields, TermWeights } from '../lexical/lexical-index.ts';
import type { FusionOptions, Ranking } from './fusion.ts';

/**
 * Learned usage as channels of their own in a hybrid `zscore` or `confidence` ranking
 * (`FusionOptions.learnedUsage`; by default the mean request vector is one), rather than mixed
 * into the description vectors. Under `zscore` (the default) each usage channel joins its
 * description channel by maximum (see `RetrievalChannels.rank`); under `confidence` it is a
 * channel of the fusion. Mixed in, a learned tool's evidence is diluted by its description (its
 * dense vector is half description), so past requests like the query count for less than they
 * match.
 *
 * Each usage score is weighed by the tool's evidence, n / (n + 1) for n learned requests: one
 * request is an anecdote (a similar request once served a neighbouring tool), many a habit. The
 * vector channel's scores are also multiplied by `learning.vectorWeight` (1 by default).
 *
 * @example
 * ```ts
 * const usage = usageChannels({}); // the default: terms in the lexical field, the vector a channel
 * usage?.set(slot, { requests: 3, vector: meanRequestVector, vectorWeight: 1 });
 * usage?.rank({ lexical, terms, vector: queryVector, pool: 50, accept: undefined });
 * ```
 */
export class UsageChannels {
  readonly terms: 'field' | 'channel' | 'none';
  readonly vector: 'mixed' | 'channel';
  // Per learned slot: n / (n + 1) for its n learned requests.
  private readonly evidence = new Map<number, number>();
  // Per slot with a usage vector: the normalised mean request vector and its weight. A map, not a
  // `VectorIndex`: learned tools are usually few, and rows up to the highest slot would cost a
  // second catalog's worth of memory.
  private vectors = new Map<number, { values: Float32Array; weight: number }>();

  constructor({ terms = 'field', vector = 'channel' }: FusionOptions['learnedUsage'] & {} = {}) {
    this.terms = terms;
    this.vector = vector;
  }

  /** The fields the lexical channel scores: its usage field only when terms go there. */
  get lexicalFields(): ScoredFields {
    return this.terms === 'field' ? 'all' : 'text';
  }

  /**
   * Records a tool's learned usage: its request count and, for the vector channel, its mean
   * request vector (undefined when it has none of the index's model). Returns whether the
   * vector was taken here (it is then not to be mixed into the dense vector).
   */
  set(
    slot: number,
    {
      requests,
      vector,
      vectorWeight,
    }: { requests: number; vector: ArrayLike<number> | undefined; vectorWeight: number },
  ): boolean {
    const evidence = requests / (requests + 1);
    if (requests > 0) this.evidence.set(slot, evidence);
    else this.evidence.delete(slot);
    if (this.vector !== 'channel') return false;
    if (vector !== undefined && requests > 0 && vectorWeight > 0) {
      const values = normalized(Float32Array.from(vector));
      this.vectors.set(slot, { values, weight: evidence * vectorWeight });
    } else this.vectors.delete(slot);
    return true;
  }

  delete(slot: number): void {
    this.evidence.delete(slot);
    this.vectors.delete(slot);
  }

  /** Drops the usage vectors (the model changed); each learned tool's usage is to be set again. */
  clearVectors(): void {
    this.vectors = new Map();
  }

  /**
   * The usage channels' rankings for a query, weighed by evidence: `terms` (when a channel) by
   * BM25 over the usage field, as a share of a full match (`shares`, 0..1) or as it is, and
   * `vector` by cosine.
   */
  rank({
    lexical,
    terms,
    vector,
    pool,
    accept,
    shares = true,
  }: {
    lexical: LexicalIndex;
    terms: TermWeights;
    vector: Float32Array;
    pool: number;
    accept: ((slot: number) => boolean) | undefined;
    /** Scale the terms channel's BM25 to a share of a full match (`confidence`). */
    shares?: boolean;
  }): { terms?: Ranking; vector?: Ranking } {
    const rankings: { terms?: Ranking; vector?: Ranking } = {};
    // Every learned tool is scored, so the evidence weighs before the pool is cut.
    const learned = this.evidence.size;
    if (this.terms === 'channel' && learned > 0) {
      const full = lexical.fullMatchScore(terms, 'usage');
      const hits = lexical.search(terms, Math.max(pool, learned), accept, 'usage');
      const share = (score: number) => (full > 0 ? Math.min(1, score / full) : 0);
      rankings.terms = this.weigh(hits, shares ? share : score => score, pool);
    }
    if (this.vector === 'channel' && this.vectors.size > 0) {
      const query = normalized(vector);
      const hits: { slot: number; score: number }[] = [];
      for (const [slot, { values, weight }] of this.vectors) {
        // A vector of another length (another model) matches nothing.
        if (values.length !== query.length || (accept !== undefined && !accept(slot))) continue;
        let dot = 0;
        for (let i = 0; i < query.length; i++) dot += (query[i] as number) * (values[i] as number);
        hits.push({ slot, score: dot * weight });
      }
      rankings.vector = top(hits, pool);
    }
    return rankings;
  }

  private weigh(hits: Ranking, scale: (score: number) => number, pool: number): Ranking {
    const weighed = hits.map(({ slot, score }) => ({
      slot,
      score: scale(score) * (this.evidence.get(slot) ?? 0),
    }));
    return top(weighed, pool);
  }
}

function top(hits: { slot: number; score: number }[], pool: number): Ranking {
  return hits.sort((a, b) => b.score - a.score || a.slot - b.slot).slice(0, pool);
}

/** The usage channels `learnedUsage` asks for, or undefined when learned usage is all mixed in. */
export function usageChannels(
  learnedUsage: FusionOptions['learnedUsage'],
): UsageChannels | undefined {
  const mixed = (learnedUsage?.terms ?? 'field') === 'field' && learnedUsage?.vector === 'mixed';
  return mixed ? undefined : new UsageChannels(learnedUsage);
}
