import { DuplicateToolError } from '../errors/duplicate-tool-error.ts';
import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import type { Embedder } from './embedder.ts';
import { type FusionOptions, type Ranking, fuseRankings } from './fusion.ts';
import { type AnalyzedFields, type Bm25fOptions, LexicalIndex } from './lexical-index.ts';
import { distinctNeeds, mergeNeeds } from './multi-need.ts';
import { toolFields, validateToolDescriptor } from './tool-fields.ts';
import { toolEmbeddingText, toolHash } from './tool-text.ts';
import type {
  ScoredTool,
  SearchOptions,
  ToolDescriptor,
  ToolFilter,
  UpsertResult,
} from './types.ts';
import { VectorIndex } from './vector-index.ts';

/** Options of {@link ToolIndex}; see `createToolIndex` for the friendly front door. */
export type ToolIndexOptions = {
  /** Dense channel; without one the index is lexical only. */
  embedder?: Embedder;
  /** `hybrid` (default with an embedder), `dense`, or `lexical` (default without). */
  retrieval?: 'lexical' | 'dense' | 'hybrid';
  /** How the channels are fused in hybrid retrieval. */
  fusion?: FusionOptions;
  /** BM25F parameters of the lexical channel. */
  bm25?: Bm25fOptions;
};

type Entry = { slot: number; tool: ToolDescriptor; hash: string };

// Each channel contributes this many candidates (at least) to fusion and to
// the multi-need merge; deeper pools change nothing measurable.
const MIN_POOL = 50;

// Tools tokenised between yields to the event loop during an upsert.
const ANALYZE_SLICE = 200;

const yieldToEventLoop = (): Promise<void> =>
  new Promise(resolve =>
    typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0),
  );

/**
 * A searchable catalog of tools. Upserts re-embed only tools whose content
 * changed; searches run a lexical (BM25F) channel, a dense channel, or both
 * fused.
 *
 * @example
 * ```ts
 * const index = new ToolIndex();
 * await index.upsert([{ name: 'get_weather', description: 'Current weather for a city' }]);
 * await index.search('will it rain in Paris?', { topK: 5 });
 * ```
 */
export class ToolIndex {
  readonly retrieval: 'lexical' | 'dense' | 'hybrid';
  private readonly entries = new Map<string, Entry>();
  private readonly slotNames: (string | undefined)[] = [];
  private readonly freeSlots: number[] = [];
  private readonly lexical: LexicalIndex | undefined;
  private vectors: VectorIndex | undefined;
  private rebuilding: Promise<void> | undefined;
  private readonly embedder: Embedder | undefined;
  private readonly fusion: FusionOptions;
  private changes = 0;

  constructor({ embedder, retrieval, fusion = {}, bm25 }: ToolIndexOptions = {}) {
    this.retrieval = retrieval ?? (embedder ? 'hybrid' : 'lexical');
    if (this.retrieval !== 'lexical' && embedder === undefined) {
      throw new InvalidArgumentError({
        argument: 'retrieval',
        value: this.retrieval,
        message: `"${this.retrieval}" retrieval needs an embedding model`,
      });
    }
    this.embedder = this.retrieval === 'lexical' ? undefined : embedder;
    this.lexical = this.retrieval === 'dense' ? undefined : new LexicalIndex(bm25);
    this.vectors = this.embedder ? new VectorIndex() : undefined;
    this.fusion = fusion;
  }

  /** Increases with every change to the catalog; lets callers cache search results. */
  get version(): number {
    return this.changes;
  }

  /** Number of indexed tools. */
  get size(): number {
    return this.entries.size;
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  get(name: string): ToolDescriptor | undefined {
    return this.entries.get(name)?.tool;
  }

  /** Indexed names, in the order they were first added. */
  names(): string[] {
    return [...this.entries.keys()];
  }

  /** Adds tools; throws {@link DuplicateToolError} if a name is already indexed. */
  async add(
    tools: readonly ToolDescriptor[],
    options?: { abortSignal?: AbortSignal },
  ): Promise<UpsertResult> {
    for (const tool of tools) {
      if (tool != null && this.entries.has(tool.name))
        throw new DuplicateToolError({ toolName: tool.name });
    }
    return this.upsert(tools, options);
  }

  /**
   * Adds new tools and replaces changed ones. Only tools whose content hash
   * changed are embedded again; the index changes only after embedding
   * succeeds, so a failed upsert leaves it as it was.
   */
  async upsert(
    tools: readonly ToolDescriptor[],
    { abortSignal }: { abortSignal?: AbortSignal } = {},
  ): Promise<UpsertResult> {
    if (!Array.isArray(tools)) {
      throw new InvalidArgumentError({
        argument: 'tools',
        value: tools,
        message: 'expected an array',
      });
    }
    const seen = new Map<string, number>();
    const changed: { tool: ToolDescriptor; hash: string }[] = [];
    let unchanged = 0;
    tools.forEach((raw, i) => {
      const tool = validateToolDescriptor(raw, `tools[${i}]`);
      const first = seen.get(tool.name);
      if (first !== undefined) {
        throw new InvalidArgumentError({
          argument: `tools[${i}].name`,
          value: tool.name,
          message: `duplicates tools[${first}].name; tool names must be unique`,
        });
      }
      seen.set(tool.name, i);
      const hash = toolHash(tool);
      if (this.entries.get(tool.name)?.hash === hash) unchanged++;
      else changed.push({ tool, hash });
    });

    const embedding = this.embedder?.embed(
      changed.map(({ tool }) => toolEmbeddingText(tool)),
      { abortSignal },
    );
    // Handled here, awaited below: a failure while we tokenise is not an unhandled rejection.
    embedding?.catch(() => {});
    // Tokenising is CPU work: done while the embedder waits on its store or model, it
    // costs no extra time. Yielding now and then lets that I/O make progress.
    const analyzed: (AnalyzedFields | undefined)[] = [];
    for (let i = 0; i < changed.length; i++) {
      if (embedding && i % ANALYZE_SLICE === 0) await yieldToEventLoop();
      analyzed.push(
        this.lexical?.analyze(toolFields((changed[i] as { tool: ToolDescriptor }).tool)),
      );
    }
    const vectors = embedding ? await embedding : [];
    if (vectors.length > 0) await this.matchDimensions(vectors[0] as Float32Array, abortSignal);
    this.vectors?.reserve(this.slotNames.length + changed.length);

    const result: UpsertResult = { added: [], updated: [], unchanged };
    changed.forEach(({ tool, hash }, i) => {
      const existing = this.entries.get(tool.name);
      const slot = existing?.slot ?? this.freeSlots.pop() ?? this.slotNames.length;
      this.slotNames[slot] = tool.name;
      this.entries.set(tool.name, { slot, tool, hash });
      this.lexical?.set(slot, analyzed[i] as AnalyzedFields);
      if (this.vectors) this.vectors.set(slot, vectors[i] as Float32Array);
      (existing ? result.updated : result.added).push(tool.name);
    });
    if (changed.length > 0) this.changes++;
    return result;
  }

  /** Removes tools by name; returns how many were indexed. */
  remove(names: readonly string[]): number {
    let removed = 0;
    for (const name of names) {
      const entry = this.entries.get(name);
      if (entry === undefined) continue;
      this.entries.delete(name);
      this.lexical?.delete(entry.slot);
      this.vectors?.delete(entry.slot);
      this.slotNames[entry.slot] = undefined;
      this.freeSlots.push(entry.slot);
      removed++;
    }
    if (removed > 0) this.changes++;
    return removed;
  }

  /**
   * The tools most relevant to `query`, best first. An empty catalog, a query
   * without words, or `topK < 1` give `[]`.
   */
  async search(
    query: string,
    { topK = 5, filter, mode = 'multi', abortSignal }: SearchOptions = {},
  ): Promise<ScoredTool[]> {
    if (typeof query !== 'string') {
      throw new InvalidArgumentError({
        argument: 'query',
        value: query,
        message: 'expected a string',
      });
    }
    if (typeof topK !== 'number' || Number.isNaN(topK)) {
      throw new InvalidArgumentError({
        argument: 'topK',
        value: topK,
        message: 'expected a number',
      });
    }
    if (mode !== 'single' && mode !== 'multi') {
      throw new InvalidArgumentError({
        argument: 'mode',
        value: mode,
        message: 'expected "single" or "multi"',
      });
    }
    const k = Math.floor(topK);
    if (k < 1 || this.entries.size === 0 || query.trim() === '') return [];
    const accept = this.acceptor(filter);
    const needs = mode === 'multi' ? distinctNeeds(query, this.lexical) : [];
    const queries = needs.length > 1 ? [query, ...needs] : [query];
    const queryVectors = this.embedder
      ? await this.embedder.embed(queries, { abortSignal, purpose: 'query' })
      : [];
    if (queryVectors.length > 0)
      await this.matchDimensions(queryVectors[0] as Float32Array, abortSignal);
    const pool = Math.max(k, MIN_POOL);
    const rankings = queries.map((text, i) => this.rank(text, queryVectors[i], pool, accept));
    const merged = rankings.length > 1 ? mergeNeeds(rankings, k) : (rankings[0] ?? []).slice(0, k);
    return merged.map(({ slot, score }) => {
      const tool = (this.entries.get(this.slotNames[slot] as string) as Entry).tool;
      return {
        name: tool.name,
        score,
        ...(tool.server !== undefined ? { server: tool.server } : {}),
      };
    });
  }

  /**
   * The model's own output decides the vector length. Vectors indexed from a
   * store can disagree (the model's settings changed under the same id): then
   * every indexed tool is embedded again, once, instead of failing each search.
   */
  private async matchDimensions(vector: Float32Array, abortSignal?: AbortSignal): Promise<void> {
    const indexed = this.vectors?.dimensions;
    const embedder = this.embedder;
    if (indexed === undefined || indexed === vector.length || embedder === undefined) return;
    this.rebuilding ??= (async () => {
      const entries = [...this.entries.values()];
      const fresh = await embedder.embed(
        entries.map(({ tool }) => toolEmbeddingText(tool)),
        { refresh: true, ...(abortSignal ? { abortSignal } : {}) },
      );
      const vectors = new VectorIndex();
      vectors.reserve(this.slotNames.length);
      entries.forEach(({ slot }, i) => vectors.set(slot, fresh[i] as Float32Array));
      this.vectors = vectors;
      this.changes++;
    })().finally(() => (this.rebuilding = undefined));
    await this.rebuilding;
  }

  private rank(
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

  private acceptor(filter: ToolFilter | undefined): ((slot: number) => boolean) | undefined {
    if (filter === undefined) return undefined;
    const toolAt = (slot: number): ToolDescriptor =>
      (this.entries.get(this.slotNames[slot] as string) as Entry).tool;
    if (typeof filter === 'function') return slot => filter(toolAt(slot));
    if (filter != null && Array.isArray(filter.servers)) {
      const servers = new Set(filter.servers);
      return slot => servers.has(toolAt(slot).server ?? '');
    }
    throw new InvalidArgumentError({
      argument: 'filter',
      value: filter,
      message: 'expected { servers: string[] } or a predicate',
    });
  }
}
