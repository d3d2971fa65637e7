import type { AnalysisSnapshots } from '../snapshots/analysis-cache.ts';
import type { CatalogVectors, Embedder } from '../dense/embedder.ts';
import type { AnalyzedFields, LexicalIndex } from '../lexical/lexical-index.ts';
import { type TermCounts, termCountsOf } from '../lexical/term-counts.ts';
import { type ToolFields, toolFields } from '../tool-fields.ts';
import type { ToolLearning } from '../learning/tool-learning.ts';
import { embeddingTextOf, toolEmbeddingKey } from '../tool-text.ts';
import type { ToolDescriptor } from '../types.ts';
import { nextTurn } from '../../util/next-turn.ts';

/** The snapshot terms or vectors came from: dropped once one of them proves wrong. */
export type SnapshotSource = {
  /** Reports the snapshot as invalid and removes it from the store. */
  reject?: ((reason: string) => Promise<void>) | undefined;
  /** Set once `reject` was called, so it is called once. */
  rejected: boolean;
};

// Tools tokenised between yields to the event loop while the embedder waits.
const ANALYZE_SLICE = 200;

/** What an upsert puts in the index for its changed tools, all gathered before it changes. */
export type LoadedTools = {
  /** Per tool, its tokens or (from a snapshot) its term counts; undefined without a lexical channel. */
  analyzed: (AnalyzedFields | TermCounts | undefined)[];
  /** Per tool, its description vector (none without a dense channel). */
  vectors: ArrayLike<number>[];
  /** The vector snapshot, when the vectors are its approximate ones. */
  vectorSource: SnapshotSource | undefined;
  /** The analysis snapshot, when the terms are its (checked as they become candidates). */
  analysisSource: SnapshotSource | undefined;
};

/**
 * Gathers an upsert's changed tools: their lexical analysis (from the catalog's analysis
 * snapshot, or tokenised while the embedder waits on its store or model), their vectors (the
 * catalog's vector snapshot, the store key by key, or the model) and their learned usage; keeps a
 * freshly tokenised catalog as a snapshot for the next start. Nothing of the index is touched, so
 * a failure leaves it as it was.
 *
 * @example
 * ```ts
 * const { analyzed, vectors } = await loadChangedTools({ changed, lexical, embedder });
 * ```
 */
export async function loadChangedTools({
  changed,
  lexical,
  embedder,
  analysis,
  learning,
  abortSignal,
}: {
  /** The tools to index, with their content hashes. */
  changed: readonly { tool: ToolDescriptor; hash: string }[];
  /** The lexical channel, when there is one. */
  lexical: LexicalIndex | undefined;
  /** The dense channel's embedder, when there is one. */
  embedder: Embedder | undefined;
  /** Where catalogs' analyses are kept. */
  analysis?: AnalysisSnapshots | undefined;
  /** Learning from use, whose stored usage of the tools is loaded too. */
  learning?: ToolLearning | undefined;
  abortSignal?: AbortSignal | undefined;
}): Promise<LoadedTools> {
  // Extracted once, if at all: the embedding texts and the lexical index both read them, and a
  // warm start (both snapshots found) neither.
  let fields: ToolFields[] | undefined;
  const fieldsOf = () => (fields ??= changed.map(({ tool }) => toolFields(tool)));
  const texts = () => fieldsOf().map(embeddingTextOf);
  const hashes = changed.map(({ hash }) => hash);
  // Asked first: its reply is small, and a hit spares the tokenising below.
  const storedAnalysis = lexical ? analysis?.read({ keys: hashes, abortSignal }) : undefined;
  storedAnalysis?.catch(() => {});
  // A whole catalog comes from its snapshot when the store has one (approximate vectors,
  // rescored as they become candidates), found by the tools' hashes: its texts are built only
  // on a miss. Otherwise from the store key by key, or the model.
  const embedding = !embedder
    ? undefined
    : embedder.embedCatalog
      ? embedder.embedCatalog(
          { keys: hashes.map(toolEmbeddingKey), texts },
          abortSignal ? { abortSignal } : {},
        )
      : embedder
          .embed(texts(), abortSignal ? { abortSignal } : {})
          .then((vectors): CatalogVectors => ({ vectors, approximate: false }));
  // Handled here, awaited below: a failure while we tokenise is not an unhandled rejection.
  embedding?.catch(() => {});
  const usageLoad = learning?.load(
    changed.flatMap(({ tool }) => (learning.get(tool.name) ? [] : [tool.name])),
    abortSignal,
  );
  usageLoad?.catch(() => {});
  const stored = await storedAnalysis;
  // Tokenising is CPU work: done while the embedder waits on its store or model, it
  // costs no extra time. Yielding now and then lets that I/O make progress.
  const analyzed: (AnalyzedFields | TermCounts | undefined)[] = stored ?? [];
  for (let i = 0; i < (stored ? 0 : changed.length); i++) {
    if (embedding && i % ANALYZE_SLICE === 0) await nextTurn();
    analyzed.push(lexical?.analyze(fieldsOf()[i] as ToolFields));
  }
  // Kept while the embedder works: the write waits for the store, not for the model.
  const keeping =
    lexical && stored === undefined
      ? analysis?.write({
          keys: hashes,
          rows: analyzed.map(tokens => termCountsOf(tokens as AnalyzedFields)),
        })
      : undefined;
  const { vectors, approximate, reject } = embedding
    ? await embedding
    : { vectors: [], approximate: false };
  await usageLoad;
  await keeping;
  return {
    analyzed,
    vectors,
    vectorSource: approximate ? { reject, rejected: false } : undefined,
    analysisSource: stored && {
      reject: (reason: string) => analysis!.drop({ keys: hashes, reason }),
      rejected: false,
    },
  };
}
