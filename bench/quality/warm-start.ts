// Warm starts in bench:quality: an index read from a store another start filled must rank
// exactly as the cold start that filled it (the snapshot's int8 vectors are replaced by the exact
// ones, before or after a search's answer), and the lexical analysis read back likewise.
import type { EmbeddingModel } from 'ai';
import { createStorage } from 'unstorage';
import { DEFAULT_LOCAL_MODEL } from '../../src/local-embedding/local-models.ts';
import type { EvalQuery } from '../../src/retrieval/eval/catalog-file.ts';
import {
  decodeSnapshotChunk,
  encodeSnapshot,
  snapshotCatalog,
  snapshotVectors,
} from '../../src/retrieval/snapshots/catalog-snapshot.ts';
import { createToolIndex } from '../../src/retrieval/create-tool-index.ts';
import {
  type EmbeddingCache,
  type EmbeddingCacheEvent,
  createEmbeddingCache,
} from '../../src/retrieval/embedding-cache.ts';
import { toolEmbeddingText } from '../../src/retrieval/tool-text.ts';
import type { ToolDescriptor } from '../../src/retrieval/types.ts';
import { type Figures, asFigures, evaluate } from './figures.ts';

/** Cold, warm (rescored before / after the answer) and int8-only figures, and the checks. */
export async function warmStartRows(
  model: EmbeddingModel,
  tools: ToolDescriptor[],
  queries: EvalQuery[],
): Promise<{ rows: Record<string, unknown>[]; checks: [string, boolean][] }> {
  const store = createStorage();
  const exact = createToolIndex({ embeddingModel: model, store });
  await exact.upsert(tools);
  const exactFigures = asFigures([await evaluate(exact, queries)]);
  const rows: Record<string, unknown>[] = [{ vectors: 'exact', ...exactFigures }];
  // Warm starts on the same store: `before` replaces each search's candidates' vectors before
  // it answers; `after` (the default) ranks with the snapshot's, replaced in the background.
  const warm = async (rescore: 'after' | 'before') => {
    const events: EmbeddingCacheEvent[] = [];
    const index = createToolIndex({
      embeddingModel: model,
      store,
      rescore,
      onCacheEvent: e => events.push(e),
    });
    await index.upsert(tools);
    const figures = asFigures([await evaluate(index, queries)]);
    await index.rescored();
    const reads = events.filter(
      (event): event is Extract<EmbeddingCacheEvent, { type: 'read' }> =>
        event.type === 'read' && !event.analysis,
    );
    rows.push({
      vectors: rescore === 'before' ? 'snapshot' : 'snapshot-after',
      ...figures,
      snapshotHit: reads[0]?.snapshot === true && reads[0].hits === tools.length,
      analysisHit: analysisHit(events, tools.length),
      // Exact vectors read after the snapshot, over all the set's queries and the background.
      rescored: reads.slice(1).reduce((sum, event) => sum + event.texts, 0),
    });
    return figures;
  };
  const before = await warm('before');
  const after = await warm('after');
  rows.push({ vectors: 'int8', ...(await int8Figures(model, store, tools, queries)) });
  return {
    rows,
    checks: [
      ['warm (snapshot) figures equal cold (exact) ones', same(before, exactFigures)],
      ['warm (rescored after ranking) figures equal cold (exact) ones', same(after, exactFigures)],
    ],
  };
}

// The snapshot's vectors alone: quantized and dequantized as a snapshot stores them, served as
// if exact (from memory), so nothing replaces them.
async function int8Figures(
  model: EmbeddingModel,
  store: ReturnType<typeof createStorage>,
  tools: ToolDescriptor[],
  queries: EvalQuery[],
): Promise<Figures> {
  const modelId = `local:${DEFAULT_LOCAL_MODEL}`;
  const texts = [...new Set(tools.map(toolEmbeddingText))];
  const stored = await createEmbeddingCache({ store }).read({ modelId, texts });
  const { hash } = snapshotCatalog(texts);
  const chunks = encodeSnapshot({ modelId, hash, vectors: stored as Float32Array[] });
  const decoded = chunks.map((value, chunk) =>
    decodeSnapshotChunk(value, { modelId, hash, chunk, total: texts.length }),
  );
  const int8 = snapshotVectors(decoded as Parameters<typeof snapshotVectors>[0]);
  const memory: EmbeddingCache = createEmbeddingCache({ maxEntries: texts.length + 10_000 });
  await memory.write({
    modelId,
    entries: texts.map((text, i) => ({ text, vector: int8[i]! })),
    persist: false,
  });
  const quantized = createToolIndex({ embeddingModel: model, cache: memory });
  await quantized.upsert(tools);
  return asFigures([await evaluate(quantized, queries)]);
}

export function same(a: Figures, b: Figures): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

// Whether a start read its whole catalog's analysis snapshot.
export function analysisHit(events: readonly EmbeddingCacheEvent[], tools: number): boolean {
  return events.some(event => event.type === 'read' && event.analysis && event.hits === tools);
}
