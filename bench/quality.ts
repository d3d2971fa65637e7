// Retrieval quality on the dev sets (Recall@1/5/10 and nDCG@10, in %), one JSON line per set and
// method:
// - lexical, `mode: 'single'` and `'multi'` (the default): what README's quality table shows;
// - hybrid with the stand-in embedder (the local fake OpenAI-compatible server over HTTP, a hashed
//   bag of words, 1,536-d; no real model is reachable here), three ways to get the dense vectors:
//   `exact` (embedded by the model: a cold start), `snapshot` (a second index on the same store:
//   the catalog's int8 snapshot, candidates rescored with the stored float32 before ranking,
//   `rescore: 'before'`), `snapshot-after` (the default, `rescore: 'after'`: ranked with the
//   snapshot, candidates rescored in the background for later searches) and `int8` (the
//   snapshot's vectors alone, never rescored, for comparison). A warm start rescoring before
//   ranking must give the cold start's figures exactly (the default is checked too). Every warm
//   start also reads the catalog's analysis snapshot (its tokenised text) instead of tokenising;
//   `lexical-warm` is the lexical index so, which must give the lexical figures exactly.
// Usage: node bench/quality.ts [--sets DIR,DIR] (writes bench/results/quality.json)
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createOpenAI } from '@ai-sdk/openai';
import { createStorage } from 'unstorage';
import { readEvalQueries, readToolCatalog } from '../src/retrieval/eval/catalog-file.ts';
import {
  decodeSnapshotChunk,
  encodeSnapshot,
  snapshotCatalog,
  snapshotVectors,
} from '../src/retrieval/snapshots/catalog-snapshot.ts';
import { createToolIndex } from '../src/retrieval/create-tool-index.ts';
import {
  type EmbeddingCacheEvent,
  createEmbeddingCache,
} from '../src/retrieval/embedding-cache.ts';
import { evaluateRetrieval } from '../src/retrieval/eval/evaluate-retrieval.ts';
import type { ToolIndex } from '../src/retrieval/tool-index.ts';
import { toolEmbeddingText } from '../src/retrieval/tool-text.ts';
import { startFakeOpenAI } from '../test/fixtures/fake-openai/fake-openai-server.ts';
import { benchResults } from './bench-results.ts';

const root = join(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    sets: {
      type: 'string',
      default: [
        join(root, 'test/fixtures/eval/dev'),
        join(root, 'test/fixtures/eval/dev-multi'),
      ].join(','),
    },
  },
});
const KS = [1, 5, 10];
const DIMENSIONS = 1536;
const MODEL = 'text-embedding-3-small';
const EMBEDDER = `fake-openai server over HTTP (hashed bag of words standing in for ${MODEL}), ${DIMENSIONS}-d`;
const results = benchResults({ name: 'quality', command: 'npm run bench:quality' });
const pct = (x: number): number => Math.round(x * 1000) / 10;

await using fake = await startFakeOpenAI({ embeddingDimensions: DIMENSIONS });
const embeddingModel = createOpenAI({ baseURL: fake.baseURL, apiKey: 'bench' }).embedding(MODEL);
const modelId = `${embeddingModel.provider}:${embeddingModel.modelId}`;

for (const dir of values.sets.split(',')) {
  const set = dir.split('/').at(-1)!;
  const tools = await readToolCatalog(join(dir, 'tools.jsonl'));
  const queries = await readEvalQueries(join(dir, 'queries.jsonl'));
  const evaluate = async (index: ToolIndex, mode: 'single' | 'multi') => {
    const report = await evaluateRetrieval({ index, queries, ks: KS, mode });
    return {
      recall: Object.fromEntries(KS.map(k => [`R@${k}`, pct(report.recall[String(k)]!)])),
      ndcg10: pct(report.ndcg10),
    };
  };
  const base = { set, tools: tools.length, queries: queries.length };

  const lexicalFigures = [];
  for (const mode of ['single', 'multi'] as const) {
    const index = createToolIndex();
    await index.upsert(tools);
    const figures = await evaluate(index, mode);
    lexicalFigures.push(figures);
    results.row({ ...base, retrieval: 'lexical', mode, ...figures });
  }
  // A lexical index on a store: the second start reads the analysis snapshot the first wrote.
  const lexicalStore = createStorage();
  await createToolIndex({ store: lexicalStore }).upsert(tools);
  const analysisEvents: EmbeddingCacheEvent[] = [];
  const lexicalWarm = createToolIndex({
    store: lexicalStore,
    onCacheEvent: event => analysisEvents.push(event),
  });
  await lexicalWarm.upsert(tools);
  const lexicalWarmFigures = await evaluate(lexicalWarm, 'multi');
  results.row({
    ...{ ...base, retrieval: 'lexical-warm', mode: 'multi', ...lexicalWarmFigures },
    analysisHit: analysisHit(analysisEvents, tools.length),
  });
  results.row({
    set,
    check: 'warm lexical (analysis snapshot) figures equal cold ones',
    ok: JSON.stringify(lexicalWarmFigures) === JSON.stringify(lexicalFigures[1]),
  });

  const store = createStorage();
  const hybrid = { ...base, retrieval: 'hybrid', mode: 'multi', embedder: EMBEDDER };
  const exact = createToolIndex({ embeddingModel, store });
  await exact.upsert(tools);
  const exactFigures = await evaluate(exact, 'multi');
  results.row({ ...hybrid, vectors: 'exact', ...exactFigures });

  // Warm starts on the same store, both rescoring policies: `before` reads each search's
  // candidates' exact vectors before ranking; `after` (the default) ranks with the snapshot's and
  // reads them in the background, for later searches.
  const warmStart = async (rescore: 'after' | 'before') => {
    const events: EmbeddingCacheEvent[] = [];
    const warm = createToolIndex({
      embeddingModel,
      store,
      rescore,
      onCacheEvent: e => events.push(e),
    });
    await warm.upsert(tools);
    const figures = await evaluate(warm, 'multi');
    await warm.rescored();
    const reads = events.filter(
      (event): event is Extract<EmbeddingCacheEvent, { type: 'read' }> =>
        event.type === 'read' && !event.analysis,
    );
    results.row({
      ...hybrid,
      vectors: rescore === 'before' ? 'snapshot' : 'snapshot-after',
      ...figures,
      snapshotHit: reads[0]?.snapshot === true && reads[0].hits === tools.length,
      analysisHit: analysisHit(events, tools.length),
      // Tools whose exact vector was read while rescoring, over all the set's queries.
      rescored: reads.slice(1).reduce((sum, event) => sum + event.texts, 0),
    });
    return figures;
  };
  const warmFigures = await warmStart('before');
  const afterFigures = await warmStart('after');

  // The snapshot's vectors alone: quantized and dequantized as a snapshot stores them, served
  // as if exact (from memory), so nothing is rescored.
  const texts = [...new Set(tools.map(toolEmbeddingText))];
  const stored = await createEmbeddingCache({ store }).read({ modelId, texts });
  const { hash } = snapshotCatalog(texts);
  const chunks = encodeSnapshot({ modelId, hash, vectors: stored as Float32Array[] });
  const decoded = chunks.map((value, chunk) =>
    decodeSnapshotChunk(value, { modelId, hash, chunk, total: texts.length }),
  );
  const int8 = snapshotVectors(decoded as Parameters<typeof snapshotVectors>[0]);
  const memory = createEmbeddingCache({ maxEntries: texts.length + 10_000 });
  await memory.write({
    modelId,
    entries: texts.map((text, i) => ({ text, vector: int8[i]! })),
    persist: false,
  });
  const quantized = createToolIndex({ embeddingModel, cache: memory });
  await quantized.upsert(tools);
  results.row({ ...hybrid, vectors: 'int8', ...(await evaluate(quantized, 'multi')) });
  results.row({
    set,
    check: 'warm (snapshot) figures equal cold (exact) ones',
    ok: JSON.stringify(warmFigures) === JSON.stringify(exactFigures),
  });
  results.row({
    set,
    check: 'warm (rescored after ranking) figures equal cold (exact) ones',
    ok: JSON.stringify(afterFigures) === JSON.stringify(exactFigures),
  });
}
await results.save();

// Whether a start read its whole catalog's analysis snapshot.
function analysisHit(events: readonly EmbeddingCacheEvent[], tools: number): boolean {
  return events.some(event => event.type === 'read' && event.analysis && event.hits === tools);
}
