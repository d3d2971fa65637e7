import type { EmbeddingModel } from 'ai';
import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import { createToolIndex } from '../retrieval/create-tool-index.ts';
import type { ToolIndex } from '../retrieval/tool-index.ts';
import type { QueryMode, ScoredTool, ToolDescriptor } from '../retrieval/types.ts';
import {
  type ConversationMessage,
  type QuerySource,
  calledTools,
  extractQuery,
} from './conversation.ts';

/** Why a tool was kept. */
export type SelectionReason = 'top-k' | 'pinned' | 'called' | 'forced';

/** One kept tool; `score` is its retrieval score when retrieval ranked it. */
export type SelectedTool = { name: string; score?: number; reason: SelectionReason };

/** What one model call was given; passed to `onSelect`. */
export type ToolSelectionEvent = {
  /** The retrieval query ('' when the conversation had no user text). */
  query: string;
  /** Kept tools, in the catalog's order. */
  selected: SelectedTool[];
  /** How many offered tools were left out. */
  dropped: number;
  /** Time spent selecting, including any embedding. */
  ms: number;
  /** Set when retrieval did not run: no query, or a catalog small enough to send whole. */
  fallback?: 'no-query' | 'small-catalog';
  /**
   * How the index ranks: `hybrid` (lexical + embeddings), `dense`, or `lexical`
   * (no embedding model configured: weaker on paraphrases like "rain" for "weather").
   */
  retrieval: 'lexical' | 'dense' | 'hybrid';
};

/** Options shared by the middleware, the strict `prepareStep` and `search`. */
export type ToolSelectionOptions = {
  /** The tool index to search, e.g. `toolbox.index` from `connectMcpServers`. Tools it lacks are indexed on the fly. */
  index?: ToolIndex;
  /** Without `index`: the embedding model of a new hybrid index (lexical only when omitted too). */
  embeddingModel?: EmbeddingModel;
  /** Tools retrieval picks per call. */
  topK?: number;
  /** Tools always kept, e.g. `['python']`. */
  pinned?: readonly string[];
  /** How the query is taken: the latest user message (default), the last N user turns, or a function. */
  query?: QuerySource;
  /** `multi` gives each need of a multi-step request a seat; `single` ranks the request as one need. */
  strategy?: QueryMode;
  /** Keep tools the conversation already called (providers reject histories naming undefined tools). */
  keepCalledTools?: boolean;
  /** With no query, catalogs of at most this many tools are sent whole. */
  sendAllBelow?: number;
  /** Called once per model call with what was kept. */
  onSelect?: (event: ToolSelectionEvent) => void;
  /** Search results remembered per (query, catalog); one query embedding per user turn. */
  cacheSize?: number;
};

/** The tools a call offers, as the selector needs them. */
export type OfferedTool = { name: string; description?: string; inputSchema?: unknown };

type OfferedSet = { all: boolean; size: number; has(name: string): boolean; names?: Set<string> };

/** The outcome of one selection. */
export type Selection = ToolSelectionEvent & { names: ReadonlySet<string> };

/**
 * The selection logic behind `toolSelectionMiddleware`, the strict-mode
 * `prepareStep` and `search`: top-k by retrieval, plus pinned, already
 * called and forced tools, in the catalog's order.
 */
export class ToolSelector {
  readonly index: ToolIndex;
  private readonly topK: number;
  private readonly pinned: ReadonlySet<string>;
  private readonly querySource: QuerySource;
  private readonly strategy: QueryMode;
  private readonly keepCalledTools: boolean;
  private readonly sendAllBelow: number;
  private readonly onSelect: ((event: ToolSelectionEvent) => void) | undefined;
  private readonly cacheSize: number;
  private readonly cache = new Map<string, Promise<ScoredTool[]>>();
  private readonly pending = new Map<string, Promise<unknown>>();

  constructor({
    index,
    embeddingModel,
    topK = 5,
    pinned = [],
    query = 'last-user-message',
    strategy = 'multi',
    keepCalledTools = true,
    sendAllBelow = 20,
    onSelect,
    cacheSize = 256,
  }: ToolSelectionOptions = {}) {
    if (!Number.isInteger(topK) || topK < 0) {
      throw new InvalidArgumentError({
        argument: 'topK',
        value: topK,
        message: 'expected a non-negative integer',
      });
    }
    if (!Array.isArray(pinned) || !pinned.every(name => typeof name === 'string')) {
      throw new InvalidArgumentError({
        argument: 'pinned',
        value: pinned,
        message: 'expected an array of tool names',
      });
    }
    this.index = index ?? createToolIndex(embeddingModel ? { embeddingModel } : {});
    this.topK = topK;
    this.pinned = new Set(pinned);
    this.querySource = query;
    this.strategy = strategy;
    this.keepCalledTools = keepCalledTools;
    this.sendAllBelow = sendAllBelow;
    this.onSelect = onSelect;
    this.cacheSize = cacheSize;
  }

  /** Selects the tools for one model call from the tools it offers. */
  async select({
    tools,
    messages,
    forced,
    abortSignal,
  }: {
    tools: readonly OfferedTool[];
    messages: readonly ConversationMessage[];
    forced?: string;
    abortSignal?: AbortSignal;
  }): Promise<Selection> {
    const started = performance.now();
    const query = extractQuery(messages, this.querySource);
    const reasons = new Map<string, SelectedTool>();
    const keep = (name: string, reason: SelectionReason, score?: number): void => {
      if (!reasons.has(name))
        reasons.set(name, { name, reason, ...(score !== undefined ? { score } : {}) });
    };
    const offered = await this.offeredSet(
      tools,
      query !== '' && tools.length > this.topK,
      abortSignal,
    );
    if (forced !== undefined && offered.has(forced)) keep(forced, 'forced');
    for (const name of this.pinned) if (offered.has(name)) keep(name, 'pinned');
    const called = this.keepCalledTools
      ? calledTools(messages).filter(name => offered.has(name))
      : [];

    let fallback: ToolSelectionEvent['fallback'];
    if (tools.length <= this.topK || (query === '' && tools.length <= this.sendAllBelow)) {
      fallback = 'small-catalog';
      for (const tool of tools) keep(tool.name, 'top-k');
    } else if (query === '') {
      fallback = 'no-query';
      // Without a request to match, the recently used tools are the best guess.
      for (const name of called.slice(0, this.topK)) keep(name, 'called');
    } else {
      // Pinned and forced tools are sent anyway: they must not take retrieval's seats.
      const sentAnyway = reasons.size;
      let seats = this.topK;
      for (const hit of await this.search(query, offered, abortSignal, this.topK + sentAnyway)) {
        if (seats === 0) break;
        if (reasons.has(hit.name)) continue;
        keep(hit.name, 'top-k', hit.score);
        seats--;
      }
    }
    for (const name of called) keep(name, 'called');

    // The catalog's own order, not the ranking: a stable tool list keeps provider prompt caches warm.
    const selected = tools
      .filter(tool => reasons.has(tool.name))
      .map(tool => reasons.get(tool.name) as SelectedTool);
    const event: ToolSelectionEvent = {
      query,
      selected,
      dropped: tools.length - selected.length,
      ms: performance.now() - started,
      ...(fallback ? { fallback } : {}),
      retrieval: this.index.retrieval,
    };
    this.onSelect?.(event);
    return { ...event, names: new Set(selected.map(tool => tool.name)) };
  }

  /** Ranked names among `tools` for `query`: the backing of the SDK's `toolSearch({ search })`. */
  async rank(
    query: string,
    tools: readonly OfferedTool[],
    topK = this.topK,
    abortSignal?: AbortSignal,
  ): Promise<ScoredTool[]> {
    return this.search(query, await this.offeredSet(tools, true, abortSignal), abortSignal, topK);
  }

  /**
   * The offered names as a set, indexing unknown tools first when retrieval
   * will run. When the call offers exactly the indexed catalog (the usual
   * case) the index itself is the set: no per-step copy of 10,000 names.
   */
  private async offeredSet(
    tools: readonly OfferedTool[],
    retrieving: boolean,
    abortSignal: AbortSignal | undefined,
  ): Promise<OfferedSet> {
    if (retrieving) await this.ensureIndexed(tools, abortSignal);
    if (retrieving && tools.length === this.index.size) {
      return { all: true, size: tools.length, has: name => this.index.has(name) };
    }
    const names = new Set(tools.map(tool => tool.name));
    return { all: false, size: names.size, has: name => names.has(name), names };
  }

  private async search(
    query: string,
    offered: OfferedSet,
    abortSignal: AbortSignal | undefined,
    topK = this.topK,
  ): Promise<ScoredTool[]> {
    // A subset of the catalog ranks differently, so its names are part of the key.
    const subset = offered.all ? '' : [...(offered.names as Set<string>)].join('\u0000');
    const key = `${this.index.version}\u0001${topK}\u0001${query}\u0001${subset}`;
    let hits = this.cache.get(key);
    if (hits === undefined) {
      hits = this.index.search(query, {
        topK,
        mode: this.strategy,
        ...(offered.all ? {} : { filter: (tool: ToolDescriptor) => offered.has(tool.name) }),
        ...(abortSignal ? { abortSignal } : {}),
      });
      this.remember(key, hits);
    }
    return hits;
  }

  private remember(key: string, hits: Promise<ScoredTool[]>): void {
    this.cache.set(key, hits);
    hits.catch(() => this.cache.delete(key)); // never cache a failure
    if (this.cache.size > this.cacheSize)
      this.cache.delete(this.cache.keys().next().value as string);
  }

  // Tools the index lacks are indexed in one batch; concurrent calls offering
  // the same new tools wait for that batch instead of embedding them again.
  private async ensureIndexed(
    tools: readonly OfferedTool[],
    abortSignal: AbortSignal | undefined,
  ): Promise<void> {
    const missing = tools.filter(
      tool => !this.index.has(tool.name) && !this.pending.has(tool.name),
    );
    if (missing.length > 0) {
      const batch = this.index.upsert(
        missing.map(({ name, description, inputSchema }) => ({
          name,
          ...(description !== undefined ? { description } : {}),
          ...(inputSchema !== undefined ? { inputSchema } : {}),
        })),
        abortSignal ? { abortSignal } : {},
      );
      for (const tool of missing) this.pending.set(tool.name, batch);
      void batch.then(
        () => missing.forEach(tool => this.pending.delete(tool.name)),
        () => missing.forEach(tool => this.pending.delete(tool.name)),
      );
    }
    const waits = new Set<Promise<unknown>>();
    for (const tool of tools) {
      const wait = this.pending.get(tool.name);
      if (wait !== undefined) waits.add(wait);
    }
    await Promise.all(waits);
  }
}
