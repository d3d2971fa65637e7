import { type Attributes, type Tracer, createContextKey, context } from '@opentelemetry/api';
import { ATTR, SPAN } from './attributes.ts';
import { telemetrySettings } from './configure-telemetry.ts';
import { instruments } from './instruments.ts';
import { inSpan } from './tracer.ts';

/** What a selection reports (the shape of `ToolSelectionEvent`). */
export type SelectionLike = {
  query: string;
  selected: ReadonlyArray<{ name: string; score?: number; reason: string }>;
  dropped: number;
  ms: number;
  fallback?: string;
  retrieval: string;
  sticky?: string;
};

// Filled by the query embedding and the search cache while a selection span is active.
type Timing = { embeddingMs: number; searches: number };
const TIMING = createContextKey('ai-toolbelt selection timing');

/**
 * Runs one selection inside a `retrieval tool-index` span (GenAI retrieval span) and records
 * what it decided: the tools sent with their reasons and scores, what was pinned, kept
 * because called, forced or discovered, the mode, sticky outcome, candidates, and where the
 * time went (query embedding vs the rest). The query text only with `recordInputs`.
 *
 * @example
 * ```ts
 * const selection = await traceSelection({ tracer, topK: 5, mode: 'multi', stability: 'fresh', candidates: tools.length, select: () => selector.select(request) });
 * ```
 */
export async function traceSelection<T extends SelectionLike>({
  tracer,
  topK,
  mode,
  stability,
  candidates,
  select,
}: {
  /** From `activeTracer()`. */
  tracer: Tracer;
  /** Tools retrieval picks per call. */
  topK: number;
  /** `multi` or `single`. */
  mode: string;
  /** `fresh` or `sticky`. */
  stability: string;
  /** Function tools the call offered. */
  candidates: number;
  /** The selection itself. */
  select: () => Promise<T>;
}): Promise<T> {
  const timing: Timing = { embeddingMs: 0, searches: 0 };
  return inSpan({
    tracer,
    name: SPAN.selection,
    attributes: {
      [ATTR.operationName]: 'retrieval',
      [ATTR.dataSourceId]: 'tool-index',
      [ATTR.requestTopK]: topK,
      [ATTR.selectionMode]: mode,
      [ATTR.selectionStability]: stability,
      [ATTR.selectionCandidates]: candidates,
    },
    parent: context.active().setValue(TIMING, timing),
    run: async span => {
      const selection = await select();
      if (span.isRecording()) span.setAttributes(selectionAttributes(selection, timing));
      return selection;
    },
  });
}

function selectionAttributes(selection: SelectionLike, timing: Timing): Attributes {
  const { selected, query, fallback, sticky } = selection;
  const named = (reason: string) => selected.filter(t => t.reason === reason).map(t => t.name);
  const forced = named('forced')[0];
  // Best first, as retrieval ranked them (the tools themselves go out in the catalog's order).
  const ranked = selected
    .filter(tool => tool.score !== undefined)
    .sort((a, b) => (b.score as number) - (a.score as number));
  return {
    [ATTR.selectionRetrieval]: selection.retrieval,
    [ATTR.selectionQueryLength]: query.length,
    [ATTR.selectionTools]: selected.map(tool => tool.name),
    [ATTR.selectionReasons]: selected.map(tool => tool.reason),
    [ATTR.selectionDropped]: selection.dropped,
    [ATTR.selectionPinned]: named('pinned'),
    [ATTR.selectionCalled]: named('called'),
    [ATTR.selectionDiscovered]: named('discovered'),
    // Ranked tools as the conventions' retrieval documents: ids and scores, no content.
    [ATTR.retrievalDocuments]: JSON.stringify(
      ranked.map(tool => ({ id: tool.name, score: round(tool.score as number) })),
    ),
    [ATTR.selectionCached]: fallback === undefined && timing.searches === 0,
    [ATTR.selectionEmbeddingMs]: round(timing.embeddingMs),
    [ATTR.selectionSearchMs]: round(Math.max(0, selection.ms - timing.embeddingMs)),
    ...(forced === undefined ? {} : { [ATTR.selectionForced]: forced }),
    ...(fallback === undefined ? {} : { [ATTR.selectionFallback]: fallback }),
    ...(sticky === undefined ? {} : { [ATTR.selectionSticky]: sticky }),
    ...(telemetrySettings().recordInputs ? { [ATTR.retrievalQueryText]: query } : {}),
  };
}

/**
 * Embeds a selection's queries inside an `ai_toolbelt.embed_query` span, and counts the time
 * toward the selection span's `embedding_ms`.
 *
 * @example
 * ```ts
 * const vectors = await traceQueryEmbedding({ tracer, model: embedder.id, texts: queries.length, embed: () => channels.embedQueries(queries) });
 * ```
 */
export async function traceQueryEmbedding<T>({
  tracer,
  model,
  texts,
  embed,
}: {
  /** From `activeTracer()`. */
  tracer: Tracer;
  /** The embedding model's id (`openai:text-embedding-3-small`). */
  model: string;
  /** Texts embedded: the request and, in multi mode, each of its needs. */
  texts: number;
  /** The embedding itself. */
  embed: () => Promise<T>;
}): Promise<T> {
  const timing = context.active().getValue(TIMING) as Timing | undefined;
  const started = performance.now();
  try {
    return await inSpan({
      tracer,
      name: SPAN.embedQuery,
      attributes: { [ATTR.embeddingModel]: model, [ATTR.embeddingTexts]: texts },
      run: embed,
    });
  } finally {
    if (timing !== undefined) timing.embeddingMs += performance.now() - started;
  }
}

/**
 * Notes that a selection ran a search (rather than answering from the per-query cache).
 * Free when no selection span is active.
 *
 * @example
 * ```ts
 * if (cache.get(key) === undefined) noteSearch();
 * ```
 */
export function noteSearch(): void {
  const timing = context.active().getValue(TIMING) as Timing | undefined;
  if (timing !== undefined) timing.searches++;
}

/**
 * Records a selection's latency (`ai_toolbelt.selection.duration`) when a meter listens.
 *
 * @example
 * ```ts
 * recordSelection(selection);
 * ```
 */
export function recordSelection(selection: SelectionLike): void {
  const metrics = instruments();
  if (metrics === undefined) return;
  metrics.selectionDuration.record(selection.ms / 1000, {
    [ATTR.selectionRetrieval]: selection.retrieval,
    [ATTR.selectionFallback]: selection.fallback ?? 'none',
  });
}

const round = (x: number) => Math.round(x * 1000) / 1000;
