import type { EmbeddingModel } from 'ai';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import { createToolIndex } from '../../retrieval/create-tool-index.ts';
import type { ToolIndex } from '../../retrieval/tool-index.ts';
import { tokenize } from '../../retrieval/lexical/tokenize.ts';
import type { QueryMode, ScoredTool } from '../../retrieval/types.ts';
import {
  type ConversationMessage,
  type QuerySource,
  calledTools,
  extractQuery,
} from '../conversation.ts';
import { type OfferedSet, type OfferedTool, OfferedTools } from './offered-tools.ts';
import { type SelectionMarker, queryHash, readMarker } from './selection-marker.ts';
import { type Stability, type StickyOutcome, stickyOptions, stickySeats } from './sticky-seats.ts';
import { discoveredTools, previousUserText } from './turn-calls.ts';

export type { OfferedTool } from './offered-tools.ts';

/** Why a tool was kept. */
export type SelectionReason = 'top-k' | 'pinned' | 'called' | 'forced' | 'discovered';

/** One kept tool; `score` is its retrieval score when retrieval ranked it. */
export type SelectedTool = { name: string; score?: number; reason: SelectionReason };

/** What one model call was given; passed to `onSelect`. */
export type ToolSelectionEvent = {
  /** The retrieval query ('' when the conversation had no user text). */
  query: string;
  /** Kept tools, in the order they are sent (the catalog's, or the previous call's when sticky). */
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
  /** With `stability: 'sticky'`, on a new request: what happened to the previous set. */
  sticky?: StickyOutcome;
};

/** What the selector needs: the retrieval side of `ToolSelectionOptions`. */
export type SelectorOptions = {
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
  mode?: QueryMode;
  /** Keep tools the conversation already called (providers reject histories naming undefined tools). */
  keepCalledTools?: boolean;
  /** With no query, catalogs of at most this many tools are sent whole. */
  sendAllBelow?: number;
  /**
   * `'fresh'` (default): a new top-k for each request. `'sticky'`: keep the
   * previous call's tools while they cover the request, so the tool list (and
   * the provider's prompt cache) stays the same; see {@link Stability}.
   */
  stability?: Stability;
  /** Called once per model call with what was kept. */
  onSelect?: (event: ToolSelectionEvent) => void;
  /** Search results remembered per (query, catalog); one query embedding per user turn. */
  cacheSize?: number;
};

/** The outcome of one selection. */
export type Selection = ToolSelectionEvent & {
  names: ReadonlySet<string>;
  /** What to carry in the conversation for the next call (see `SelectionMarker`). */
  marker: SelectionMarker;
};

/**
 * The selection logic behind `toolSelectionMiddleware`, the strict-mode
 * `prepareStep` and `search`: top-k by retrieval, plus pinned, already
 * called, discovered and forced tools. One request keeps one selection: the
 * previous call's, read back from the conversation, when it was made for the
 * same query (so learning or a catalog change never reshuffles a turn).
 */
export class ToolSelector {
  readonly index: ToolIndex;
  /** Tools retrieval picks per call. */
  readonly topK: number;
  /** `multi` or `single`. */
  readonly mode: QueryMode;
  private readonly pinned: Set<string>;
  private readonly querySource: QuerySource;
  private readonly keepCalledTools: boolean;
  private readonly sendAllBelow: number;
  /** Sticky selection's settings; undefined for `stability: 'fresh'`. */
  readonly sticky: { maxSeats: number; followUpWords: number } | undefined;
  private readonly onSelect: ((event: ToolSelectionEvent) => void) | undefined;
  private readonly offered: OfferedTools;
  private readonly searchTools = new Set<string>();

  constructor({
    index,
    embeddingModel,
    topK = 5,
    pinned = [],
    query = 'last-user-message',
    mode = 'multi',
    keepCalledTools = true,
    sendAllBelow = 20,
    stability = 'fresh',
    onSelect,
    cacheSize = 256,
  }: SelectorOptions = {}) {
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
    this.mode = mode;
    this.pinned = new Set(pinned);
    this.querySource = query;
    this.keepCalledTools = keepCalledTools;
    this.sendAllBelow = sendAllBelow;
    this.sticky = stickyOptions(stability, topK);
    this.onSelect = onSelect;
    this.offered = new OfferedTools({ index: this.index, mode, cacheSize });
  }

  /** Marks `name` as a search tool (`toolSearch`): always kept, and what it finds is kept too. */
  addSearchTool(name: string): void {
    this.searchTools.add(name);
  }

  isSearchTool(name: string): boolean {
    return this.searchTools.has(name);
  }

  /** The retrieval query this selector takes from `messages` ('' when they hold no user text). */
  queryOf(messages: readonly ConversationMessage[]): string {
    return extractQuery(messages, this.querySource);
  }

  /** Selects the tools for one model call from the tools it offers. */
  async select({
    tools,
    messages,
    forced,
    abortSignal,
    report = true,
  }: {
    tools: readonly OfferedTool[];
    messages: readonly ConversationMessage[];
    forced?: string;
    abortSignal?: AbortSignal;
    /** Call `onSelect` (off for companions that only mirror the middleware's selection). */
    report?: boolean;
  }): Promise<Selection> {
    const started = performance.now();
    const query = extractQuery(messages, this.querySource);
    const reasons = new Map<string, SelectedTool>();
    const keep = (name: string, reason: SelectionReason, score?: number): void => {
      if (!reasons.has(name))
        reasons.set(name, { name, reason, ...(score !== undefined ? { score } : {}) });
    };
    const offered = await this.offered.offeredSet(
      tools,
      query !== '' && tools.length > this.topK,
      abortSignal,
    );
    if (forced !== undefined && offered.has(forced)) keep(forced, 'forced');
    for (const name of this.pinned) if (offered.has(name)) keep(name, 'pinned');
    for (const name of this.searchTools) if (offered.has(name)) keep(name, 'pinned');
    const called = this.keepCalledTools
      ? calledTools(messages).filter(name => offered.has(name))
      : [];
    const marker = readMarker(messages);

    let fallback: ToolSelectionEvent['fallback'];
    let sticky: StickyOutcome | undefined;
    const seats: string[] = [];
    if (tools.length <= this.topK || (query === '' && tools.length <= this.sendAllBelow)) {
      fallback = 'small-catalog';
      for (const tool of tools) keep(tool.name, 'top-k');
    } else if (query === '') {
      fallback = 'no-query';
      // Without a request to match, the recently used tools are the best guess.
      for (const name of called.slice(0, this.topK)) keep(name, 'called');
    } else {
      const request = { query, messages, offered, marker, reasons, abortSignal };
      const picked = await this.retrievalSeats(request);
      sticky = picked.sticky;
      for (const name of picked.seats) {
        keep(name, 'top-k', picked.scores.get(name));
        seats.push(name);
      }
    }
    for (const name of discoveredTools(messages, this.searchTools))
      if (offered.has(name)) keep(name, 'discovered');
    for (const name of called) keep(name, 'called');

    const selected = this.ordered(tools, reasons, this.sticky ? marker : undefined);
    const event: ToolSelectionEvent = {
      query,
      selected,
      dropped: tools.length - selected.length,
      ms: performance.now() - started,
      ...(fallback ? { fallback } : {}),
      retrieval: this.index.retrieval,
      ...(sticky ? { sticky } : {}),
    };
    if (report) this.onSelect?.(event);
    const names = selected.map(tool => tool.name);
    return {
      ...event,
      names: new Set(names),
      marker: { query: queryHash(query), tools: names, seats },
    };
  }

  /** Ranked names among `tools` for `query`: the backing of the SDK's `toolSearch({ search })`. */
  async rank(
    query: string,
    tools: readonly OfferedTool[],
    topK = this.topK,
    abortSignal?: AbortSignal,
  ): Promise<ScoredTool[]> {
    const offered = await this.offered.offeredSet(tools, true, abortSignal);
    return (await this.offered.search(query, offered, topK, abortSignal)).hits;
  }

  // Retrieval's seats: the same request's previous seats, a sticky set, or a fresh top-k.
  private async retrievalSeats({
    query,
    messages,
    offered,
    marker,
    reasons,
    abortSignal,
  }: {
    query: string;
    messages: readonly ConversationMessage[];
    offered: OfferedSet;
    marker: ReturnType<typeof readMarker>;
    reasons: ReadonlyMap<string, SelectedTool>;
    abortSignal: AbortSignal | undefined;
  }): Promise<{ seats: string[]; scores: Map<string, number>; sticky?: StickyOutcome }> {
    // Pinned and forced tools are sent anyway: they must not take retrieval's seats.
    const open = (name: string) => offered.has(name) && !reasons.has(name);
    const search = async (text: string) => {
      const { hits, leaders } = await this.offered.search(
        text,
        offered,
        this.topK + reasons.size,
        abortSignal,
      );
      const free = hits.filter(hit => !reasons.has(hit.name));
      return {
        fresh: free.slice(0, this.topK).map(hit => hit.name),
        leaders: hits.slice(0, leaders).flatMap(hit => (reasons.has(hit.name) ? [] : [hit.name])),
        scores: new Map(hits.map(hit => [hit.name, hit.score])),
      };
    };
    const sameRequest =
      marker?.inTurn === true && marker.query === queryHash(query) && marker.seats.length > 0;
    const previousText = this.sticky && !sameRequest ? previousUserText(messages) : '';
    // A short follow-up ("yes", "now for Berlin") is read with the message it follows.
    const followUp =
      previousText !== '' && tokenize(query).length <= (this.sticky?.followUpWords ?? 0);
    const now = await search(followUp ? `${previousText}\n${query}` : query);
    // A follow-up rarely names a new tool: it is covered when the conversation's best tool is.
    if (followUp) now.leaders = now.leaders.slice(0, 1);
    if (sameRequest) return { seats: marker.seats.filter(open), scores: now.scores };
    if (this.sticky === undefined || previousText === '')
      return { seats: now.fresh, scores: now.scores };
    // Without a marker (a conversation stored without provider metadata), the
    // previous request's fresh top-k stands in for what it was given.
    const previous = marker ? marker.seats.filter(open) : (await search(previousText)).fresh;
    const { seats, outcome } = stickySeats({
      previous,
      fresh: now.fresh,
      leaders: now.leaders,
      maxSeats: this.sticky.maxSeats,
    });
    return { seats, scores: now.scores, sticky: outcome };
  }

  // The catalog's order; when sticky, the previous call's order first, so a
  // grown list only appends and the cached prefix stays valid up to the new tools.
  private ordered(
    tools: readonly OfferedTool[],
    reasons: ReadonlyMap<string, SelectedTool>,
    previous: SelectionMarker | undefined,
  ): SelectedTool[] {
    const first = (previous?.tools ?? []).filter(name => reasons.has(name));
    const placed = new Set(first);
    const rest = tools.filter(tool => reasons.has(tool.name) && !placed.has(tool.name));
    return [...first, ...rest.map(tool => tool.name)].map(
      name => reasons.get(name) as SelectedTool,
    );
  }
}
