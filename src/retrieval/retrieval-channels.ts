import type { Embedder } from './embedder.ts';
import { type FusionOptions, type Ranking, fuseRankings } from './fusion.ts';
import { type AnalyzedFields, type Bm25fOptions, LexicalIndex } from './lexical-index.ts';
import type { TermCounts } from './term-counts.ts';
import { distinctNeeds, mergeNeeds } from './multi-need.ts';
import { tokenize } from './tokenize.ts';
import { MAX_TERMS_PER_REQUEST, type ToolUsage } from './usage-record.ts';
import { combineVectors, normalized, usageBag } from './usage-signals.ts';
import { VectorIndex } from './vector-index.ts';

// Candidates a need's ranking is searched to when attributing a learned request.
const NEED_POOL = 50;
// An int8 snapshot keeps a vector's direction to within a cosine of about 0.9999 for real
// embeddings; one below this was not made from the exact vector (forged, or another model's).
const MIN_SNAPSHOT_COSINE = 0.99;

/** The snapshot approximate vectors came from: dropped once one of them proves wrong. */
export type SnapshotSource = {
  /** Reports the snapshot as invalid and removes it from the store (see `CatalogVectors`). */
  reject?: ((reason: string) => Promise<void>) | undefined;
  /** Set once `reject` was called, so it is called once. */
  rejected: boolean;
};

/**
 * The ranking machinery behind a `ToolIndex`, per slot: the lexical (BM25F)
 * channel, the dense channel, their fusion, and learned usage mixed into both.
 * The index owns names and slots; this owns what is searched.
 */
export class RetrievalChannels {
  readonly lexical: LexicalIndex | undefined;
  readonly embedder: Embedder | undefined;
  private vectors: VectorIndex | undefined;
  private readonly fusion: FusionOptions;
  // Description vectors of tools whose indexed vector mixes in learned usage.
  private readonly descriptionVectors = new Map<number, Float32Array>();
  // The snapshot of each slot whose vector is approximate.
  private readonly sources = new Map<number, SnapshotSource>();
  private rebuilding: Promise<void> | undefined;

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
  }

  reserve(capacity: number): void {
    this.vectors?.reserve(capacity);
  }

  /**
   * Indexes a tool's analysed fields and description vector in `slot`; a vector from a snapshot
   * (`source`) is approximate, rescored with the exact one once it is a candidate (see
   * `rescoreCandidates`).
   */
  set(
    slot: number,
    analyzed: AnalyzedFields | TermCounts | undefined,
    vector: ArrayLike<number> | undefined,
    source?: SnapshotSource,
  ): void {
    if (analyzed) this.lexical?.set(slot, analyzed);
    this.descriptionVectors.delete(slot);
    if (vector && this.vectors) {
      this.vectors.set(slot, vector, { approximate: source !== undefined });
      if (source) this.sources.set(slot, source);
      else this.sources.delete(slot);
    }
  }

  /** Approximate vectors in the index. */
  get approximateCount(): number {
    return this.vectors?.approximateCount ?? 0;
  }

  /** The snapshot the approximate vector of `slot` came from. */
  sourceOf(slot: number): SnapshotSource | undefined {
    return this.sources.get(slot);
  }

  /** The slots whose vectors are still the approximate ones of `source`. */
  approximateSlotsOf(source: SnapshotSource): number[] {
    const slots: number[] = [];
    for (const [slot, of] of this.sources) if (of === source) slots.push(slot);
    return slots;
  }

  /**
   * Approximate vectors among the dense candidates of `vectors` (the `depth` best slots of
   * each), which must be replaced by exact ones before the ranking is trusted.
   */
  approximateCandidates({
    vectors,
    depth,
    accept,
  }: {
    /** Query vectors. */
    vectors: readonly Float32Array[];
    /** Candidates looked at per query. */
    depth: number;
    /** Slot filter. */
    accept: ((slot: number) => boolean) | undefined;
  }): number[] {
    const index = this.vectors;
    if (index === undefined || index.approximateCount === 0) return [];
    const slots = new Set<number>();
    for (const vector of vectors) {
      if (vector.length !== index.dimensions) continue;
      for (const { slot } of index.search(vector, depth, accept))
        if (index.isApproximate(slot)) slots.add(slot);
    }
    return [...slots];
  }

  /**
   * Puts the exact description vector of `slot` in place of its approximate one: `kept` when it
   * could not (no longer approximate, another length), `mismatch` when the two point different
   * ways (the snapshot's vector was not made from this one), else `replaced`.
   */
  setExact(slot: number, vector: Float32Array): 'kept' | 'replaced' | 'mismatch' {
    const index = this.vectors;
    if (index === undefined || !index.isApproximate(slot) || vector.length !== index.dimensions)
      return 'kept';
    const approximate = this.descriptionVectors.get(slot) ?? (index.get(slot) as Float32Array);
    const matches = cosine(approximate, vector) >= MIN_SNAPSHOT_COSINE;
    this.descriptionVectors.delete(slot);
    this.sources.delete(slot);
    index.set(slot, vector);
    return matches ? 'replaced' : 'mismatch';
  }

  delete(slot: number): void {
    this.lexical?.delete(slot);
    this.vectors?.delete(slot);
    this.descriptionVectors.delete(slot);
    this.sources.delete(slot);
  }

  /**
   * Puts a tool's learned usage (or its absence) into both channels: its terms
   * into the lexical usage field, and its mean request vector (when made by
   * this index's model, at its length) into the tool's dense vector.
   */
  applyUsage(slot: number, usage: ToolUsage | undefined, vectorWeight: number): void {
    const { terms, length } = usageBag(usage);
    this.lexical?.setUsage(slot, terms, length);
    const vectors = this.vectors;
    if (vectors === undefined) return;
    const description = this.descriptionVectors.get(slot) ?? vectors.get(slot);
    if (description === undefined) return;
    // A mix of an approximate description stays approximate, to be rescored like it.
    const approximate = vectors.isApproximate(slot);
    const learned = usage?.vector;
    if (
      learned !== undefined &&
      (usage?.requests.length ?? 0) > 0 &&
      learned.modelId === this.embedder?.id &&
      learned.values.length === description.length &&
      vectorWeight > 0
    ) {
      this.descriptionVectors.set(slot, description);
      vectors.set(slot, combineVectors(description, learned.values, vectorWeight), { approximate });
    } else if (this.descriptionVectors.delete(slot)) {
      vectors.set(slot, description, { approximate });
    }
  }

  /**
   * The part of a request that a tool served: in a multi-need request, the
   * need it ranks best for (or the whole request when it ranks for none).
   */
  async servedNeed(query: string, slot: number, abortSignal?: AbortSignal): Promise<string> {
    const needs = distinctNeeds(query, this.lexical);
    if (needs.length < 2) return query;
    const vectors = await this.embedQueries(needs, abortSignal);
    let best = query;
    let bestRank = Number.POSITIVE_INFINITY;
    needs.forEach((need, i) => {
      const rank = this.rank(need, vectors[i], NEED_POOL, undefined).findIndex(
        hit => hit.slot === slot,
      );
      if (rank >= 0 && rank < bestRank) [best, bestRank] = [need, rank];
    });
    return best;
  }

  /**
   * What to learn from a request a tool served: the part it served (see
   * {@link servedNeed}) as index terms and, with a model, its normalised
   * embedding. Undefined when there is nothing to learn.
   */
  async describeRequest(
    query: string,
    slot: number,
    abortSignal?: AbortSignal,
  ): Promise<
    | { text: string; terms: string[]; vector?: { modelId: string; values: Float32Array } }
    | undefined
  > {
    const text = await this.servedNeed(query, slot, abortSignal);
    const terms = [...new Set(tokenize(text))].slice(0, MAX_TERMS_PER_REQUEST);
    const embedder = this.embedder;
    if (terms.length === 0 && embedder === undefined) return undefined;
    const [vector] = await this.embedQueries([text], abortSignal);
    return {
      text,
      terms,
      ...(vector && embedder
        ? { vector: { modelId: embedder.id, values: normalized(vector) } }
        : {}),
    };
  }

  /** Embeddings of user text (kept in memory only), or [] without a model. */
  async embedQueries(texts: string[], abortSignal?: AbortSignal): Promise<Float32Array[]> {
    const embedder = this.embedder;
    return embedder
      ? embedder.embed(texts, { purpose: 'query', ...(abortSignal ? { abortSignal } : {}) })
      : [];
  }

  /**
   * Ranks a request and its needs (`queries[0]` is the whole request) and
   * merges them into the top `topK`; `leaders` counts the hits at the head that
   * are the request's or a need's best.
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
    /** Their embeddings (empty without a model). */
    vectors: readonly Float32Array[];
    /** Hits wanted. */
    topK: number;
    /** Candidates per ranking. */
    pool: number;
    /** Slot filter. */
    accept: ((slot: number) => boolean) | undefined;
  }): { merged: { slot: number; score: number }[]; leaders: number } {
    const rankings = queries.map((text, i) => this.rank(text, vectors[i], pool, accept));
    const merged =
      rankings.length > 1 ? mergeNeeds(rankings, topK) : (rankings[0] ?? []).slice(0, topK);
    const heads = new Set(rankings.flatMap(ranking => (ranking[0] ? [ranking[0].slot] : [])));
    return { merged, leaders: Math.min(heads.size, merged.length) };
  }

  /** One ranking of the pool best slots for a query (and its vector), channels fused. */
  rank(
    query: string,
    vector: Float32Array | undefined,
    pool: number,
    accept: ((slot: number) => boolean) | undefined,
  ): Ranking {
    const lexical = this.lexical?.search(query, pool, accept);
    const dense = vector ? this.vectors?.search(vector, pool, accept) : undefined;
    if (lexical && dense) return fuseRankings(lexical, dense, this.fusion);
    return lexical ?? dense ?? [];
  }

  /**
   * The model's own output decides the vector length. Vectors indexed from a
   * store can disagree (the model's settings changed under the same id): then
   * every indexed tool is embedded again, once, instead of failing each search.
   * Returns true when it rebuilt.
   */
  async matchDimensions({
    vector,
    tools,
    onRebuilt,
    abortSignal,
  }: {
    /** A vector the model just made. */
    vector: ArrayLike<number>;
    /** Every indexed tool: its slot, snapshot key (`toolEmbeddingKey`) and embedding text. */
    tools: () => { slot: number; key: string; text: string }[];
    /** Called once the new vectors are in, to put learned usage back. */
    onRebuilt: () => void;
    abortSignal?: AbortSignal | undefined;
  }): Promise<boolean> {
    const indexed = this.vectors?.dimensions;
    const embedder = this.embedder;
    if (indexed === undefined || indexed === vector.length || embedder === undefined) return false;
    this.rebuilding ??= (async () => {
      const entries = tools();
      const texts = entries.map(({ text }) => text);
      const options = { refresh: true, ...(abortSignal ? { abortSignal } : {}) };
      // Through embedCatalog, so the stale snapshot is replaced too.
      const fresh = embedder.embedCatalog
        ? (
            await embedder.embedCatalog(
              { keys: entries.map(({ key }) => key), texts: () => texts },
              options,
            )
          ).vectors
        : await embedder.embed(texts, options);
      const vectors = new VectorIndex();
      vectors.reserve(Math.max(0, ...entries.map(({ slot }) => slot + 1)));
      entries.forEach(({ slot }, i) => vectors.set(slot, fresh[i] as Float32Array));
      this.vectors = vectors;
      this.descriptionVectors.clear();
      this.sources.clear();
      onRebuilt();
    })().finally(() => (this.rebuilding = undefined));
    await this.rebuilding;
    return true;
  }
}

function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    aa += x * x;
    bb += y * y;
  }
  return aa === 0 || bb === 0 ? 0 : dot / Math.sqrt(aa * bb);
}
