// ranking/: one search's ranking: the lexical and dense channels, their fusion, and a multi-need
// request's needs merged.
import type { Embedder } from '../dense/embedder.ts';
import { combineVectors } from '../dense/vector-math.ts';
import { VectorIndex } from '../dense/vector-index.ts';
import type { AnalyzedFields, Bm25fOptions } from '../lexical/lexical-index.ts';
import { LexicalIndex } from '../lexical/lexical-index.ts';
import type { TermCounts } from '../lexical/term-counts.ts';
import {
  DEFAULT_FUSION_METHOD,
  type FusionOptions,
  type Ranking,
  fuseConfidence,
  fuseRankings,
} from './fusion.ts';
import { mergeNeeds } from './multi-need.ts';
import { type UsageChannels, usageChannels } from './usage-channels.ts';

/** What a tool's learned usage puts into the channels (see `IndexLearning`). */
export type UsageSignals = {
  /** Each learned term's share of the requests (the lexical usage field). */
  terms: ReadonlyMap<string, number>;
  /** The mean request length, in terms. */
  length: number;
  /** The requests' mean vector, when made by this index's model. */
  vector?: ArrayLike<number> | undefined;
  /** Weight of `vector` against the description's. */
  vectorWeight: number;
  /** How many requests were learned (0: none). */
  requests: number;
};

/** The slots each channel offered a search, over all its queries (see {@link RetrievalChannels.rankNeeds}). */
export type ChannelCandidates = { lexical: Set<number>; dense: Set<number> };

/**
 * The searchable state of a `ToolIndex`, per slot, and how it ranks: the lexical (BM25F)
 * channel, the dense channel with each tool's description vector, learned usage (mixed into
 * both, or under hybrid `zscore` and `confidence` scored on its own: `UsageChannels`), and their
 * fusion. The index owns names and slots; warm-start checks and learning write
 * here through the methods below.
 *
 * @example
 * ```ts
 * const channels = new RetrievalChannels({ embedder, retrieval: 'hybrid', fusion: {}, bm25: undefined });
 * channels.set(0, channels.lexical!.analyze(fields), vector);
 * channels.rankNeeds({ queries: ['weather'], vectors, topK: 5, pool: 50, accept: undefined });
 * ```
 */
export class RetrievalChannels {
  readonly lexical: LexicalIndex | undefined;
  readonly embedder: Embedder | undefined;
  private vectors: VectorIndex | undefined;
  private readonly fusion: FusionOptions;
  // Description vectors of tools whose indexed vector mixes in learned usage.
  private readonly descriptionVectors = new Map<number, ArrayLike<number>>();
  // Learned usage as channels of its own (`fusion.learnedUsage`), under hybrid `zscore` and
  // `confidence`.
  private readonly usage: UsageChannels | undefined;

  constructor({
    embedder,
    retrieval,
    fusion,
    bm25,
  }: {
    /** The dense model, when `retrieval` is not lexical. */
    embedder: Embedder | undefined;
    /** Which channels run. */
    retrieval: 'lexical' | 'dense' | 'hybrid';
    /** How the channels are fused. */
    fusion: FusionOptions;
    /** BM25F parameters. */
    bm25: Bm25fOptions | undefined;
  }) {
    this.embedder = retrieval === 'lexical' ? undefined : embedder;
    this.lexical = retrieval === 'dense' ? undefined : new LexicalIndex(bm25);
    this.vectors = this.embedder ? new VectorIndex() : undefined;
    this.fusion = fusion;
    const method = fusion.method ?? DEFAULT_FUSION_METHOD;
    const ownChannels = method === 'zscore' || method === 'confidence';
    this.usage =
      retrieval === 'hybrid' && ownChannels ? usageChannels(fusion.learnedUsage) : undefined;
  }

  reserve(capacity: number): void {
    this.vectors?.reserve(capacity);
  }

  /** The indexed vectors' length, once there is one. */
  get dimensions(): number | undefined {
    return this.vectors?.dimensions;
  }

  /**
   * Indexes a tool's analysed fields and description vector in `slot`; `approximate` marks a
   * vector from a snapshot (it ranks like any other until its exact one replaces it).
   */
  set(
    slot: number,
    analyzed: AnalyzedFields | TermCounts | undefined,
    vector: ArrayLike<number> | undefined,
    { approximate = false }: { approximate?: boolean } = {},
  ): void {
    if (analyzed) this.lexical?.set(slot, analyzed);
    if (vector) this.setDescription(slot, vector, { approximate });
  }

  /**
   * Puts `vector` as the description vector of `slot`, without learned usage (mix it back with
   * `applyUsage`).
   */
  setDescription(
    slot: number,
    vector: ArrayLike<number>,
    { approximate = false }: { approximate?: boolean } = {},
  ): void {
    this.descriptionVectors.delete(slot);
    this.vectors?.set(slot, vector, { approximate });
  }

  /** The description vector of `slot` (learned usage left out), if it has one. */
  descriptionOf(slot: number): ArrayLike<number> | undefined {
    return this.descriptionVectors.get(slot) ?? this.vectors?.get(slot);
  }

  /** Whether the vector of `slot` is still a snapshot's approximate one. */
  isApproximate(slot: number): boolean {
    return this.vectors?.isApproximate(slot) ?? false;
  }

  /**
   * Replaces every description vector at once (new vectors of another length: the old ones can
   * no longer be compared with any query); learned usage is to be mixed back in.
   */
  replaceVectors(entries: readonly { slot: number; vector: ArrayLike<number> }[]): void {
    const vectors = new VectorIndex();
    vectors.reserve(Math.max(0, ...entries.map(({ slot }) => slot + 1)));
    for (const { slot, vector } of entries) vectors.set(slot, vector);
    this.vectors = vectors;
    this.descriptionVectors.clear();
    this.usage?.clearVectors();
  }

  delete(slot: number): void {
    this.lexical?.delete(slot);
    this.vectors?.delete(slot);
    this.descriptionVectors.delete(slot);
    this.usage?.delete(slot);
  }

  /**
   * Puts a tool's learned usage (or its absence) into the channels: its terms into the lexical
   * usage field, and its mean request vector (when of the index's model) into the tool's dense
   * vector, or each into a usage channel of its own where `fusion.learnedUsage` asks (under
   * hybrid `zscore` and `confidence`, the vector by default).
   */
  applyUsage(slot: number, usage: UsageSignals): void {
    this.lexical?.setUsage(slot, usage.terms, usage.length);
    const vectors = this.vectors;
    const description = this.descriptionOf(slot);
    // Only a vector of the index's model (the description's length) means anything here.
    const dimensions = description?.length ?? vectors?.dimensions;
    const learned = usage.vector;
    const vector =
      learned !== undefined && learned.length === dimensions && usage.vectorWeight > 0
        ? learned
        : undefined;
    const signals = { requests: usage.requests, vector, vectorWeight: usage.vectorWeight };
    if (this.usage?.set(slot, signals)) return;
    if (vectors === undefined || description === undefined) return;
    // A mix of an approximate description stays approximate, to be replaced like it.
    const approximate = vectors.isApproximate(slot);
    if (vector !== undefined) {
      this.descriptionVectors.set(slot, description);
      vectors.set(slot, combineVectors(description, vector, usage.vectorWeight), { approximate });
    } else if (this.descriptionVectors.delete(slot)) {
      vectors.set(slot, description, { approximate });
    }
  }

  /** Embeddings of user text (kept in memory only), or [] without a model. */
  async embedQueries(texts: string[], abortSignal?: AbortSignal): Promise<Float32Array[]> {
    const embedder = this.embedder;
    return embedder
      ? embedder.embed(texts, { purpose: 'query', ...(abortSignal ? { abortSignal } : {}) })
      : [];
  }

  /**
   * Ranks a request and its needs (`queries[0]` is the whole request) and merges them into the
   * top `topK`; `leaders` counts the hits at the head that are the request's or a need's best,
   * and `candidates` the slots each channel offered (what a warm start checks).
   */
  rankNeeds({
    queries,
    vectors,
    topK,
    pool,
    accept,
  }: {
    /** The request, then each of its needs. */
    queries: readonly string[];
    /** Their embeddings (empty without a model, or while its vectors are rebuilt). */
    vectors: readonly Float32Array[];
    /** Hits wanted. */
    topK: number;
    /** Candidates per ranking. */
    pool: number;
    /** Slot filter. */
    accept: ((slot: number) => boolean) | undefined;
  }): {
    merged: { slot: number; score: number }[];
    leaders: number;
    candidates: ChannelCandidates;
  } {
    const candidates: ChannelCandidates = { lexical: new Set(), dense: new Set() };
    const rankings = queries.map((text, i) =>
      this.rank(text, vectors[i], pool, accept, candidates),
    );
    const merged =
      rankings.length > 1 ? mergeNeeds(rankings, topK) : (rankings[0] ?? []).slice(0, topK);
    const heads = new Set(rankings.flatMap(ranking => (ranking[0] ? [ranking[0].slot] : [])));
    return { merged, leaders: Math.min(heads.size, merged.length), candidates };
  }

  /**
   * One ranking of the `pool` best slots for a query (and its vector), channels fused; each
   * channel's slots are added to `candidates` when given.
   */
  rank(
    query: string,
    vector: Float32Array | undefined,
    pool: number,
    accept: ((slot: number) => boolean) | undefined,
    candidates?: ChannelCandidates,
  ): Ranking {
    const terms = this.lexical?.queryTerms(query);
    const fields = this.usage?.lexicalFields ?? 'all';
    const lexical = terms && this.lexical!.search(terms, pool, accept, fields);
    const index = this.vectors;
    // While snapshot vectors remain, the same scan looks twice as deep: an approximate vector
    // just past the pool may belong in it once exact, and is then a candidate to replace.
    const depth = index && index.approximateCount > 0 ? 2 * pool : pool;
    const found =
      vector && index && vector.length === index.dimensions
        ? index.search(vector, depth, accept)
        : undefined;
    if (candidates) {
      for (const { slot } of lexical ?? []) candidates.lexical.add(slot);
      for (const { slot } of found ?? []) candidates.dense.add(slot);
    }
    const dense = found && found.length > pool ? found.slice(0, pool) : found;
    if (lexical && dense) {
      const method = this.fusion.method ?? DEFAULT_FUSION_METHOD;
      const fullMatch = method === 'confidence' ? this.lexical!.fullMatchScore(terms!, fields) : 0;
      const usage = this.usage?.rank({
        ...{ lexical: this.lexical!, terms: terms!, vector: vector!, pool, accept },
        shares: method === 'confidence',
      });
      if (usage?.terms?.length || usage?.vector?.length) {
        if (method === 'zscore') {
          // Past requests are another way into the same channel: a learned tool scores the
          // better of its description and its requests (weighed by evidence). Added as a
          // channel of its own, a request that once served a sibling tool outweighed a clear
          // lexical match (azure-mcp with learning R@5 95.1 -> 87.1); mixed into the
          // description vector, it was diluted (dev-multi 60.2 against 59.6 here, and below
          // on azure-mcp). See docs/retrieval.md.
          return fuseRankings(
            byMaximum(lexical, usage.terms),
            byMaximum(dense, usage.vector),
            this.fusion,
          );
        }
        const shares = lexical.map(({ slot, score }) => ({
          slot,
          score: fullMatch > 0 ? Math.min(1, score / fullMatch) : 0,
        }));
        return fuseConfidence([
          shares,
          dense,
          ...(usage.terms ? [usage.terms] : []),
          ...(usage.vector ? [usage.vector] : []),
        ]);
      }
      return fuseRankings(lexical, dense, this.fusion, fullMatch);
    }
    return lexical ?? dense ?? [];
  }
}

/** A channel's ranking with another ranking of the same slots merged in, each slot at its higher score. */
function byMaximum(channel: Ranking, usage: Ranking | undefined): Ranking {
  if (usage === undefined || usage.length === 0) return channel;
  const scores = new Map(channel.map(({ slot, score }) => [slot, score]));
  for (const { slot, score } of usage) scores.set(slot, Math.max(scores.get(slot) ?? score, score));
  return [...scores]
    .map(([slot, score]) => ({ slot, score }))
    .sort((a, b) => b.score - a.score || a.slot - b.slot);
}
