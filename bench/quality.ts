// Retrieval quality on the dev sets (Recall@1/5/10 and nDCG@10, in %), one JSON line per set and
// method:
// - lexical, `mode: 'single'` and `'multi'` (the default); `lexical-warm`, the lexical index read
//   from its analysis snapshot, which must give the lexical figures exactly;
// - per local embedding model (`ai-toolbelt/local-embedding`, real models fetched from PyPI):
//   dense alone, and hybrid with each fusion candidate (`confidence`, the default, `convex`,
//   `rrf`, `zscore`, `rerank`), each without learning (the whole set) and with learning from
//   use (2 folds by query id: learn one fold's (query, gold) pairs, evaluate the other, both
//   ways; lexical with learning too), and a check per set and learning setting that the default
//   fusion's R@5 is at least the better channel's. `confidence` also runs with learned usage
//   placed otherwise (`FusionOptions.learnedUsage`; the default keeps the terms in the lexical
//   usage field and makes the mean request vector a channel of its own): `usage-mixed` the
//   vector mixed into the dense vector (the default before), `usage-both` the terms a channel
//   too, `usage-vector-only` the terms left out, `usage-dense-only` the vector mixed in and the
//   terms left out;
// - a warm start with the default model: `exact` (a cold start, embedded by the model),
//   `snapshot` (the catalog's int8 snapshot, a search's candidates replaced by the stored
//   float32 before it answers: `rescore: 'before'`), `snapshot-after` (the default: replaced in
//   the background), `int8` (the snapshot's vectors alone, for comparison); warm starts must
//   give the cold start's figures exactly.
// Usage: node bench/quality.ts [--sets DIR,DIR] [--models a,b] (writes bench/results/quality.json)
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { EmbeddingModel } from 'ai';
import { createStorage } from 'unstorage';
import { localEmbeddingModel } from '../src/local-embedding/local-embedding-model.ts';
import { DEFAULT_LOCAL_MODEL, LOCAL_MODELS } from '../src/local-embedding/local-models.ts';
import { defaultModelsDir } from '../src/local-embedding/models-dir.ts';
import {
  type EvalQuery,
  readEvalQueries,
  readToolCatalog,
} from '../src/retrieval/eval/catalog-file.ts';
import {
  decodeSnapshotChunk,
  encodeSnapshot,
  snapshotCatalog,
  snapshotVectors,
} from '../src/retrieval/snapshots/catalog-snapshot.ts';
import {
  type CreateToolIndexOptions,
  createToolIndex,
} from '../src/retrieval/create-tool-index.ts';
import {
  type EmbeddingCache,
  type EmbeddingCacheEvent,
  createEmbeddingCache,
} from '../src/retrieval/embedding-cache.ts';
import { evaluateRetrieval } from '../src/retrieval/eval/evaluate-retrieval.ts';
import { learnFromQueries } from '../src/retrieval/eval/learn-from-queries.ts';
import type { FusionOptions } from '../src/retrieval/ranking/fusion.ts';
import type { ToolIndex } from '../src/retrieval/tool-index.ts';
import { toolEmbeddingText } from '../src/retrieval/tool-text.ts';
import type { ToolDescriptor } from '../src/retrieval/types.ts';
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
    models: { type: 'string', default: LOCAL_MODELS.map(model => model.name).join(',') },
  },
});
const KS = [1, 5, 10];
const FUSIONS: { label: string; fusion: FusionOptions }[] = [
  ...(['confidence', 'convex', 'rrf', 'zscore', 'rerank'] as const).map(method => ({
    label: method,
    fusion: { method },
  })),
  ...(
    [
      ['usage-mixed', { vector: 'mixed' }],
      ['usage-both', { terms: 'channel' }],
      ['usage-vector-only', { terms: 'none' }],
      ['usage-dense-only', { terms: 'none', vector: 'mixed' }],
    ] as const
  ).map(([usage, learnedUsage]) => ({
    label: `confidence/${usage}`,
    fusion: { method: 'confidence', learnedUsage } as FusionOptions,
  })),
];
const DEFAULT_FUSION = 'confidence';
const results = benchResults({ name: 'quality', command: 'npm run bench:quality' });
const pct = (x: number): number => Math.round(x * 1000) / 10;
const fold = (id: string): 0 | 1 =>
  ((createHash('sha256').update(id).digest()[0] as number) & 1) as 0 | 1;

type Figures = { recall: Record<string, number>; ndcg10: number };
type Catalog = { set: string; tools: ToolDescriptor[]; queries: EvalQuery[] };

const catalogs: Catalog[] = [];
for (const dir of values.sets.split(',')) {
  catalogs.push({
    set: dir.split('/').at(-1)!,
    tools: await readToolCatalog(join(dir, 'tools.jsonl')),
    queries: await readEvalQueries(join(dir, 'queries.jsonl')),
  });
}

/** Figures over `queries`, weighted by their count (fractions), for summing folds. */
async function evaluate(index: ToolIndex, queries: readonly EvalQuery[], mode = 'multi') {
  const report = await evaluateRetrieval({
    index,
    queries,
    ks: KS,
    mode: mode as 'multi',
  });
  return { report, weight: queries.length };
}

const asFigures = (parts: Awaited<ReturnType<typeof evaluate>>[]): Figures => {
  const total = parts.reduce((sum, part) => sum + part.weight, 0);
  const mean = (value: (part: (typeof parts)[number]) => number) =>
    pct(parts.reduce((sum, part) => sum + value(part) * part.weight, 0) / total);
  return {
    recall: Object.fromEntries(
      KS.map(k => [`R@${k}`, mean(part => part.report.recall[String(k)]!)]),
    ),
    ndcg10: mean(part => part.report.ndcg10),
  };
};

/** Without learning (the whole set) and with it (two folds, each learned from the other). */
async function withAndWithoutLearning(
  { tools, queries }: Catalog,
  options: CreateToolIndexOptions,
): Promise<{ without: Figures; learned: Figures; learnedPairs: number }> {
  const plain = createToolIndex(options);
  await plain.upsert(tools);
  const without = asFigures([await evaluate(plain, queries)]);
  const folds: [EvalQuery[], EvalQuery[]] = [[], []];
  for (const query of queries) folds[fold(query.id)].push(query);
  const parts = [];
  let learnedPairs = 0;
  for (const test of [0, 1] as const) {
    const index = createToolIndex({ ...options, learning: true });
    await index.upsert(tools);
    learnedPairs += await learnFromQueries({ index, queries: folds[1 - test]! });
    parts.push(await evaluate(index, folds[test]));
  }
  return { without, learned: asFigures(parts), learnedPairs };
}

// 1. Lexical.
const lexicalByLearning = new Map<string, { without: Figures; learned: Figures }>();
for (const catalog of catalogs) {
  const { set, tools, queries } = catalog;
  const base = { set, tools: tools.length, queries: queries.length };
  const single = createToolIndex();
  await single.upsert(tools);
  results.row({
    ...{ ...base, retrieval: 'lexical', mode: 'single' },
    ...asFigures([await evaluate(single, queries, 'single')]),
  });
  const lexical = await withAndWithoutLearning(catalog, {});
  lexicalByLearning.set(set, lexical);
  results.row({ ...base, retrieval: 'lexical', mode: 'multi', ...lexical.without });
  results.row({
    ...{ ...base, retrieval: 'lexical', mode: 'multi', learning: true },
    ...lexical.learned,
  });
  // A lexical index on a store: the second start reads the analysis snapshot the first wrote.
  const lexicalStore = createStorage();
  await createToolIndex({ store: lexicalStore }).upsert(tools);
  const events: EmbeddingCacheEvent[] = [];
  const warm = createToolIndex({ store: lexicalStore, onCacheEvent: event => events.push(event) });
  await warm.upsert(tools);
  const warmFigures = asFigures([await evaluate(warm, queries)]);
  results.row({
    ...{ ...base, retrieval: 'lexical-warm', mode: 'multi', ...warmFigures },
    analysisHit: analysisHit(events, tools.length),
  });
  results.row({
    set,
    check: 'warm lexical (analysis snapshot) figures equal cold ones',
    ok: JSON.stringify(warmFigures) === JSON.stringify(lexical.without),
  });
}

// 2. Each local model: dense alone and every fusion, with and without learning.
const installed = values.models
  .split(',')
  .filter(name => existsSync(join(defaultModelsDir(), name, 'ai-toolbelt-model.json')));
for (const name of installed) {
  await using model = localEmbeddingModel({ model: name });
  // One cache per model: each catalog is embedded once, every index reads it from there.
  const cache = createEmbeddingCache({ maxEntries: 100_000 });
  for (const catalog of catalogs) {
    const { set, tools, queries } = catalog;
    const base = { set, tools: tools.length, queries: queries.length, model: name, mode: 'multi' };
    const lexical = lexicalByLearning.get(set)!;
    const dense = await withAndWithoutLearning(catalog, {
      embeddingModel: model,
      cache,
      retrieval: 'dense',
    });
    results.row({ ...base, retrieval: 'dense', ...dense.without });
    results.row({ ...base, retrieval: 'dense', learning: true, ...dense.learned });
    for (const { label, fusion: options } of FUSIONS) {
      const hybrid = await withAndWithoutLearning(catalog, {
        embeddingModel: model,
        cache,
        fusion: options,
      });
      const fusion = { retrieval: 'hybrid', fusion: label, default: label === DEFAULT_FUSION };
      results.row({ ...base, ...fusion, ...hybrid.without });
      results.row({ ...base, ...fusion, learning: true, ...hybrid.learned });
      if (label !== DEFAULT_FUSION) continue;
      for (const learning of ['without', 'learned'] as const) {
        const best = Math.max(lexical[learning].recall['R@5']!, dense[learning].recall['R@5']!);
        results.row({
          set,
          model: name,
          learning: learning === 'learned',
          check: `default fusion R@5 at least the better channel's`,
          fused: hybrid[learning].recall['R@5'],
          better: best,
          ok: hybrid[learning].recall['R@5']! >= best,
        });
      }
    }
  }
}

// 3. Warm starts with the default model.
if (installed.includes(DEFAULT_LOCAL_MODEL)) {
  await using model = localEmbeddingModel({ model: DEFAULT_LOCAL_MODEL });
  for (const { set, tools, queries } of catalogs) {
    const base = { set, tools: tools.length, queries: queries.length, model: DEFAULT_LOCAL_MODEL };
    const warmStarts = await warmStartRows(model, tools, queries);
    for (const row of warmStarts.rows) results.row({ ...base, retrieval: 'hybrid', ...row });
    for (const [check, ok] of warmStarts.checks) results.row({ set, check, ok });
  }
}
await results.save();

async function warmStartRows(
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

function same(a: Figures, b: Figures): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

// Whether a start read its whole catalog's analysis snapshot.
function analysisHit(events: readonly EmbeddingCacheEvent[], tools: number): boolean {
  return events.some(event => event.type === 'read' && event.analysis && event.hits === tools);
}
