import { DuplicateToolError } from '../errors/duplicate-tool-error.ts';
import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import type { AnalysisSnapshots } from './snapshots/analysis-cache.ts';
import type { Embedder } from './dense/embedder.ts';
import type { FusionOptions } from './ranking/fusion.ts';
import type { Bm25fOptions } from './lexical/lexical-index.ts';
import { loadChangedTools } from './warm-start/load-changed-tools.ts';
import { diffCatalog } from './catalog-diff.ts';
import { distinctNeeds } from './ranking/multi-need.ts';
import { acceptorFor, checkSearchArguments } from './search-arguments.ts';
import { toolFields } from './tool-fields.ts';
import type { ToolLearning } from './learning/tool-learning.ts';
import { IndexLearning } from './learning/index-learning.ts';
import { toolEmbeddingKey, toolEmbeddingText } from './tool-text.ts';
import type { ToolUsage } from './learning/usage-record.ts';
import { RetrievalChannels } from './ranking/retrieval-channels.ts';
import { WarmStart } from './warm-start/warm-start.ts';
import type { ScoredTool, SearchOptions, ToolDescriptor, UpsertResult } from './types.ts';
import { abortable } from '../util/abortable.ts';
import { traceQueryEmbedding } from '../telemetry/selection-telemetry.ts';
import { activeTracer } from '../telemetry/tracer.ts';

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
  /** Learning from use (see `createToolIndex({ learning })`); off without it. */
  learning?: ToolLearning;
  /**
   * When a search's candidates hold approximate vectors (from a catalog snapshot): `'after'`
   * ranks with them and reads their exact ones first among the background reads that replace
   * every approximate vector, so later searches rank with those (`rescored()` waits for them);
   * `'before'` reads them before answering. An int8 vector is within a cosine of about 0.9999
   * of its exact one: on the dev sets, a warm start gives the cold start's figures either way
   * (bench:quality).
   */
  rescore?: 'after' | 'before';
  /**
   * Where a catalog's lexical analysis is kept between starts, so an unchanged catalog is not
   * tokenised again (`createToolIndex` gives its store's); terms read from it are checked against
   * the tools' text, a search's candidates before its answer and the rest in the background
   * (see `WarmStart`).
   */
  analysis?: AnalysisSnapshots;
};

/** A search with the number of leading hits that are some need's best (see `searchWithLeaders`). */
export type LedSearch = { hits: ScoredTool[]; leaders: number };

type Entry = { slot: number; tool: ToolDescriptor; hash: string };

// Each channel contributes this many candidates (at least) to fusion and to
// the multi-need merge; deeper pools change nothing measurable.
const MIN_POOL = 50;

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
  private readonly channels: RetrievalChannels;
  private readonly usageOf: IndexLearning;
  private changes = 0;
  private readonly analysis: AnalysisSnapshots | undefined;
  private readonly warmStart: WarmStart;

  constructor({
    embedder,
    retrieval,
    fusion = {},
    bm25,
    learning,
    rescore = 'after',
    analysis,
  }: ToolIndexOptions = {}) {
    if (rescore !== 'after' && rescore !== 'before') {
      throw new InvalidArgumentError({
        argument: 'rescore',
        value: rescore,
        message: "expected 'after' or 'before'",
      });
    }
    this.retrieval = retrieval ?? (embedder ? 'hybrid' : 'lexical');
    if (this.retrieval !== 'lexical' && embedder === undefined) {
      throw new InvalidArgumentError({
        argument: 'retrieval',
        value: this.retrieval,
        message: `"${this.retrieval}" retrieval needs an embedding model`,
      });
    }
    this.channels = new RetrievalChannels({ embedder, retrieval: this.retrieval, fusion, bm25 });
    this.analysis = this.channels.lexical && analysis;
    this.warmStart = new WarmStart({
      channels: this.channels,
      rescore,
      fieldsOf: slot => toolFields(this.toolAt(slot)),
      textOf: slot =>
        this.slotNames[slot] === undefined ? undefined : toolEmbeddingText(this.toolAt(slot)),
      catalog: () =>
        [...this.entries.values()].map(({ slot, tool, hash }) => ({
          slot,
          key: toolEmbeddingKey(hash),
          text: toolEmbeddingText(tool),
        })),
      onReplaced: slot => this.usageOf.applyIfLearned(this.slotNames[slot] as string, slot),
      changed: () => this.changes++,
    });
    this.usageOf = new IndexLearning({
      learning,
      channels: this.channels,
      slotOf: name => this.entries.get(name)?.slot,
      names: () => this.names(),
      changed: () => this.changes++,
    });
  }

  /** Whether this index learns from use (`learn`, `forget`). */
  get learns(): boolean {
    return this.usageOf.learning !== undefined;
  }

  /** Increases with every change to the catalog or to learned usage; lets callers cache search results. */
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
    const { changed, unchanged } = diffCatalog(tools, name => this.entries.get(name)?.hash);

    const { analyzed, vectors, vectorSource, analysisSource } = await loadChangedTools({
      changed,
      lexical: this.channels.lexical,
      embedder: this.channels.embedder,
      analysis: this.analysis,
      learning: this.usageOf.learning,
      abortSignal,
    });
    // Stored vectors of another length than the model's new ones: all are embedded again.
    if (vectors.length > 0 && this.warmStart.differsFrom(vectors[0]!))
      await abortable(this.warmStart.rebuildVectors(), abortSignal);
    this.channels.reserve(this.slotNames.length + changed.length);

    const result: UpsertResult = { added: [], updated: [], unchanged };
    changed.forEach(({ tool, hash }, i) => {
      const existing = this.entries.get(tool.name);
      const slot = existing?.slot ?? this.freeSlots.pop() ?? this.slotNames.length;
      this.slotNames[slot] = tool.name;
      this.entries.set(tool.name, { slot, tool, hash });
      this.channels.set(slot, analyzed[i], vectors[i], { approximate: vectorSource !== undefined });
      this.warmStart.loaded(slot, { terms: analysisSource, vector: vectorSource });
      this.usageOf.applyIfLearned(tool.name, slot);
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
      this.channels.delete(entry.slot);
      this.warmStart.forget(entry.slot);
      this.usageOf.learning?.evict(name);
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
  async search(query: string, options: SearchOptions = {}): Promise<ScoredTool[]> {
    return (await this.searchWithLeaders(query, options)).hits;
  }

  /**
   * Resolves once a warm start's background work is done: every approximate vector replaced by
   * its exact one and every tool's stored terms checked, or a read failed (a later search starts
   * again); never rejects.
   *
   * @example
   * ```ts
   * await index.search('weather in Paris');
   * await index.rescored(); // the next search ranks with exact vectors
   * ```
   */
  rescored(): Promise<void> {
    return this.warmStart.settled();
  }

  /**
   * {@link search}, also saying how many hits at the head are a need's best:
   * the request's best tool, then each need's best in a multi-need request. A
   * tool set that holds these covers the request (cache-stable selection).
   */
  async searchWithLeaders(
    query: string,
    { topK = 5, filter, mode = 'multi', abortSignal }: SearchOptions = {},
  ): Promise<LedSearch> {
    checkSearchArguments({ query, topK, mode });
    const k = Math.floor(topK);
    if (k < 1 || this.entries.size === 0 || query.trim() === '') return { hits: [], leaders: 0 };
    this.usageOf.syncWhenDue();
    const accept = acceptorFor(filter, slot => this.toolAt(slot));
    const needs = mode === 'multi' ? distinctNeeds(query, this.channels.lexical) : [];
    const queries = needs.length > 1 ? [query, ...needs] : [query];
    const { embedder } = this.channels;
    const tracer = embedder && activeTracer();
    const queryVectors = tracer
      ? await traceQueryEmbedding({
          ...{ tracer, model: embedder!.id, texts: queries.length },
          embed: () => this.channels.embedQueries(queries, abortSignal),
        })
      : await this.channels.embedQueries(queries, abortSignal);
    const pool = Math.max(k, MIN_POOL);
    const { merged, leaders } = await this.warmStart.rank({
      vectors: queryVectors,
      rank: vectors => this.channels.rankNeeds({ queries, vectors, topK: k, pool, accept }),
      denseOnly: this.retrieval === 'dense',
      abortSignal,
    });
    const hits = merged.map(({ slot, score }) => {
      const tool = this.toolAt(slot);
      return {
        name: tool.name,
        score,
        ...(tool.server !== undefined ? { server: tool.server } : {}),
      };
    });
    return { hits, leaders };
  }

  /**
   * Learns that `tool` served `query`: the request's terms join the tool's
   * usage field (lexical) and, with an embedding model, its embedding joins the
   * tool's usage vector. In a multi-need request only the need the tool ranks
   * best for is learned. Needs `createToolIndex({ learning })`; shared through
   * its store. Returns false when the request has nothing to learn.
   */
  async learn({
    query,
    tool,
    abortSignal,
  }: {
    /** The user's request. */
    query: string;
    /** The tool that served it (called, and succeeded). */
    tool: string;
    abortSignal?: AbortSignal;
  }): Promise<boolean> {
    return this.usageOf.learn({ query, tool, abortSignal });
  }

  /** Forgets what was learned about `tools`, here and in the shared store. */
  forget(tools: string | readonly string[]): Promise<void> {
    return this.usageOf.forget(tools);
  }

  /** What the index has learned about a tool (terms per request; text only with `keepText`). */
  usage(tool: string): Readonly<ToolUsage> | undefined {
    return this.usageOf.usage(tool);
  }

  /** Picks up what other replicas learned (searches do this every `syncEveryMs` on their own). */
  syncUsage(abortSignal?: AbortSignal): Promise<number> {
    return this.usageOf.sync(abortSignal);
  }

  private toolAt(slot: number): ToolDescriptor {
    return (this.entries.get(this.slotNames[slot] as string) as Entry).tool;
  }
}
