// Retrieval quality on the six dev sets of test/fixtures/eval (Recall@1/5/10 and nDCG@10, in %),
// one JSON line per set and method:
// - lexical, `mode: 'single'` and `'multi'` (the default), with and without learning from use
//   (2 folds by query id: learn one fold's (query, gold) pairs, evaluate the other, both ways);
//   `lexical-warm`, the lexical index read from its analysis snapshot, which must give the lexical
//   figures exactly;
// - per local embedding model (`ai-toolbelt/local-embedding`, real models fetched from registries):
//   dense alone, and hybrid with every candidate fusion setting (`zscore`, `convex`, `rrf` at
//   several dense weights, `confidence`, `rerank`), each with and without learning, and where
//   learned usage goes under `zscore` (the default joins it to its channel by maximum;
//   `usage-mixed` mixes the request vector into the description's);
// - leave-one-set-out: every setting chosen by measurement is chosen on five sets and scored on
//   the sixth (`leave-one-out.ts`), for each of the six, next to the choice on all six
//   (in-sample); macro means over the six; and the checks the default must pass;
// - what a tool is embedded as (`text-variants.ts`), dense alone, with the default model;
// - the default fusion over a model that knows nothing (`random-embedding-model.ts`);
// - warm starts with the default model (`warm-start.ts`) on the `--warm-sets`.
// Usage: node bench/quality.ts [--sets DIR,...] [--models a,b] [--warm-sets a,b] [--no-text]
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { EmbeddingModelV4 } from '@ai-sdk/provider';
import { createStorage } from 'unstorage';
import { localEmbeddingModel } from '../src/local-embedding/local-embedding-model.ts';
import { DEFAULT_LOCAL_MODEL, LOCAL_MODELS } from '../src/local-embedding/local-models.ts';
import { defaultModelsDir } from '../src/local-embedding/models-dir.ts';
import { readEvalQueries, readToolCatalog } from '../src/retrieval/eval/catalog-file.ts';
import { createToolIndex } from '../src/retrieval/create-tool-index.ts';
import {
  type EmbeddingCacheEvent,
  createEmbeddingCache,
} from '../src/retrieval/embedding-cache.ts';
import {
  DEFAULT_FUSION_METHOD,
  type FusionOptions,
  ZSCORE_DENSE_WEIGHT,
} from '../src/retrieval/ranking/fusion.ts';
import { benchResults } from './bench-results.ts';
import {
  type Catalog,
  type Figures,
  asFigures,
  evaluate,
  macroMean,
  withAndWithoutLearning,
} from './quality/figures.ts';
import { type Candidate, leaveOneOut } from './quality/leave-one-out.ts';
import { memoEmbeddingModel } from './quality/memo-embedding-model.ts';
import { randomEmbeddingModel } from './quality/random-embedding-model.ts';
import { TEXT_VARIANTS } from './quality/text-variants.ts';
import { analysisHit, same, warmStartRows } from './quality/warm-start.ts';

const root = join(import.meta.dirname, '..');
const SETS = ['dev', 'dev-multi', 'azure-mcp', 'seal-tools', 'toolbench-multi', 'rest-apis'];
const { values } = parseArgs({
  options: {
    sets: {
      type: 'string',
      default: SETS.map(set => join(root, 'test/fixtures/eval', set)).join(','),
    },
    models: { type: 'string', default: LOCAL_MODELS.map(model => model.name).join(',') },
    'warm-sets': { type: 'string', default: 'dev,dev-multi' },
    'no-text': { type: 'boolean', default: false },
  },
});

// The candidates, the default first (ties in a choice keep the earlier one).
const label = (fusion: FusionOptions): string =>
  [fusion.method, fusion.denseWeight, fusion.rrfK && `k=${fusion.rrfK}`].filter(Boolean).join(' ');
const DEFAULT: FusionOptions = { method: DEFAULT_FUSION_METHOD, denseWeight: ZSCORE_DENSE_WEIGHT };
const GRID: FusionOptions[] = [
  DEFAULT,
  ...[0.1, 0.2, 0.4, 0.5].map(denseWeight => ({ method: 'zscore' as const, denseWeight })),
  ...[0.2, 0.3, 0.5].map(denseWeight => ({ method: 'convex' as const, denseWeight })),
  ...[
    [0.3, 60],
    [0.5, 60],
    [0.3, 10],
  ].map(([denseWeight, rrfK]) => ({ method: 'rrf' as const, denseWeight, rrfK })),
  { method: 'confidence' },
  { method: 'rerank' },
];
// Only with learning: the learned request vector mixed into the description's (not joined by
// maximum); without learning it ranks as the default does.
const USAGE_MIXED: FusionOptions = { ...DEFAULT, learnedUsage: { vector: 'mixed' } };
const DEFAULT_LABEL = label(DEFAULT);
const results = benchResults({
  name: 'quality',
  command: 'npm run bench:quality',
  notes: [
    'R@k and nDCG@10 in %; learning: 2 folds by query id, each evaluated after learning the other fold',
    'leave-one-out: each setting chosen on five sets (worst R@5 gain over lexical, losses only, then mean gain) and scored on the sixth',
  ],
});

const catalogs: Catalog[] = [];
for (const dir of values.sets.split(',')) {
  catalogs.push({
    set: dir.split('/').at(-1)!,
    tools: await readToolCatalog(join(dir, 'tools.jsonl')),
    queries: await readEvalQueries(join(dir, 'queries.jsonl')),
  });
}
const sets = catalogs.map(catalog => catalog.set);
const base = ({ set, tools, queries }: Catalog) => ({
  set,
  tools: tools.length,
  queries: queries.length,
});

// 1. Lexical.
const lexical = { without: new Map<string, Figures>(), learned: new Map<string, Figures>() };
for (const catalog of catalogs) {
  const single = createToolIndex();
  await single.upsert(catalog.tools);
  const singleFigures = asFigures([await evaluate(single, catalog.queries, 'single')]);
  results.row({ ...base(catalog), retrieval: 'lexical', mode: 'single', ...singleFigures });
  const figures = await withAndWithoutLearning(catalog, {});
  lexical.without.set(catalog.set, figures.without);
  lexical.learned.set(catalog.set, figures.learned);
  results.row({ ...base(catalog), retrieval: 'lexical', mode: 'multi', ...figures.without });
  results.row({
    ...{ ...base(catalog), retrieval: 'lexical', mode: 'multi', learning: true },
    ...figures.learned,
  });
  // A lexical index on a store: the second start reads the analysis snapshot the first wrote.
  const store = createStorage();
  await createToolIndex({ store }).upsert(catalog.tools);
  const events: EmbeddingCacheEvent[] = [];
  const warm = createToolIndex({ store, onCacheEvent: event => events.push(event) });
  await warm.upsert(catalog.tools);
  const warmFigures = asFigures([await evaluate(warm, catalog.queries)]);
  results.row({
    ...{ ...base(catalog), retrieval: 'lexical-warm', mode: 'multi', ...warmFigures },
    analysisHit: analysisHit(events, catalog.tools.length),
  });
  results.row({
    set: catalog.set,
    check: 'warm lexical (analysis snapshot) figures equal cold ones',
    ok: same(warmFigures, figures.without),
  });
}
for (const learning of [false, true]) {
  const bySet = learning ? lexical.learned : lexical.without;
  results.row({
    ...{ set: 'macro', retrieval: 'lexical', mode: 'multi', learning },
    ...macroMean([...bySet.values()]),
  });
}

// 2. Each local model: dense alone, every candidate fusion, with and without learning.
const installed = values.models
  .split(',')
  .filter(name => existsSync(join(defaultModelsDir(), name, 'ai-toolbelt-model.json')));
for (const name of installed) {
  await using local = localEmbeddingModel({ model: name });
  // Many indexes over the same texts: each catalog and request is embedded once.
  const model = memoEmbeddingModel(local as EmbeddingModelV4);
  const cache = createEmbeddingCache({ maxEntries: 100_000 });
  const candidates = new Map<string, { without: Candidate; learned: Candidate }>();
  const record = (key: string, set: string, figures: { without: Figures; learned: Figures }) => {
    const entry = candidates.get(key) ?? {
      without: { label: key, bySet: new Map() },
      learned: { label: key, bySet: new Map() },
    };
    (entry.without.bySet as Map<string, Figures>).set(set, figures.without);
    (entry.learned.bySet as Map<string, Figures>).set(set, figures.learned);
    candidates.set(key, entry);
  };
  const dense: { without: Figures[]; learned: Figures[] } = { without: [], learned: [] };
  for (const catalog of catalogs) {
    const row = { ...base(catalog), model: name, mode: 'multi' };
    const denseFigures = await withAndWithoutLearning(catalog, {
      ...{ embeddingModel: model, cache, retrieval: 'dense' },
    });
    dense.without.push(denseFigures.without);
    dense.learned.push(denseFigures.learned);
    results.row({ ...row, retrieval: 'dense', ...denseFigures.without });
    results.row({ ...row, retrieval: 'dense', learning: true, ...denseFigures.learned });
    // Every candidate with the default model (the one the default fusion is chosen for); the
    // default fusion alone with the others.
    for (const fusion of name === DEFAULT_LOCAL_MODEL ? [...GRID, USAGE_MIXED] : [DEFAULT]) {
      const key = fusion === USAGE_MIXED ? `${DEFAULT_LABEL} usage-mixed` : label(fusion);
      const figures = await withAndWithoutLearning(catalog, {
        ...{ embeddingModel: model, cache, fusion },
      });
      record(key, catalog.set, figures);
      const tags = { retrieval: 'hybrid', fusion: key, default: key === DEFAULT_LABEL };
      if (fusion !== USAGE_MIXED) results.row({ ...row, ...tags, ...figures.without });
      results.row({ ...row, ...tags, learning: true, ...figures.learned });
    }
  }
  for (const learning of [false, true] as const) {
    const which = learning ? 'learned' : 'without';
    results.row({
      set: 'macro',
      model: name,
      retrieval: 'dense',
      learning,
      ...macroMean(dense[which]),
    });
    for (const [key, entry] of candidates) {
      if (!learning && key.endsWith('usage-mixed')) continue;
      results.row({
        ...{ set: 'macro', model: name, retrieval: 'hybrid', fusion: key, learning },
        ...{ default: key === DEFAULT_LABEL, ...macroMean([...entry[which].bySet.values()]) },
      });
    }
    if (name !== DEFAULT_LOCAL_MODEL) continue;
    // 3. Leave one set out: the choice on five sets, scored on the sixth.
    const pool = [...candidates]
      .filter(([key]) => learning || !key.endsWith('usage-mixed'))
      .map(([, entry]) => entry[which]);
    const lexicalBySet = learning ? lexical.learned : lexical.without;
    const { inSample, folds } = leaveOneOut(pool, lexicalBySet, sets);
    for (const fold of folds) {
      results.row({
        ...{ kind: 'leave-one-out', model: name, learning, set: fold.set, picked: fold.picked },
        ...{ leftOut: fold.leftOut, inSample: fold.inSample, lexical: lexicalBySet.get(fold.set) },
      });
    }
    const leftOutMacro = macroMean(folds.map(fold => fold.leftOut));
    const lexicalMacro = macroMean([...lexicalBySet.values()]);
    results.row({
      ...{ kind: 'leave-one-out', model: name, learning, set: 'macro', picked: inSample.label },
      ...{ leftOut: leftOutMacro, inSample: macroMean([...inSample.bySet.values()]) },
      lexical: lexicalMacro,
    });
    const r5 = (figures: Figures | undefined) => figures?.recall['R@5'] ?? Number.NaN;
    if (learning) {
      // The default is chosen for an app that has learned nothing; once it has, it must still
      // beat lexical retrieval that learned as much.
      const byDefault = candidates.get(DEFAULT_LABEL)!.learned.bySet;
      for (const set of sets) {
        results.row({
          ...{ model: name, learning, set, check: 'default R@5 above lexical, both learning' },
          ...{ fused: r5(byDefault.get(set)), lexical: r5(lexicalBySet.get(set)) },
          ok: r5(byDefault.get(set)) > r5(lexicalBySet.get(set)),
        });
      }
      continue;
    }
    results.row({
      ...{ model: name, learning, check: 'the default is the setting chosen on all six sets' },
      ...{ default: DEFAULT_LABEL, chosen: inSample.label, ok: inSample.label === DEFAULT_LABEL },
    });
    for (const fold of folds) {
      results.row({
        ...{ model: name, learning, set: fold.set, check: 'left-out R@5 at or above lexical' },
        ...{ leftOut: r5(fold.leftOut), lexical: r5(lexicalBySet.get(fold.set)) },
        ok: r5(fold.leftOut) >= r5(lexicalBySet.get(fold.set)),
      });
    }
    results.row({
      ...{ model: name, learning, set: 'macro', check: 'left-out macro R@5 at least lexical + 3' },
      ...{ leftOut: r5(leftOutMacro), lexical: r5(lexicalMacro) },
      ok: r5(leftOutMacro) >= r5(lexicalMacro) + 3,
    });
  }

  // 4. What a tool is embedded as (dense alone, default model).
  if (name !== DEFAULT_LOCAL_MODEL || values['no-text']) continue;
  for (const catalog of catalogs) {
    for (const variant of TEXT_VARIANTS) {
      const index = createToolIndex({ embeddingModel: model, cache, retrieval: 'dense' });
      await index.upsert(variant.tools(catalog.tools));
      results.row({
        ...{ ...base(catalog), model: name, retrieval: 'dense', text: variant.text },
        ...asFigures([await evaluate(index, catalog.queries)]),
      });
    }
  }
}

// 5. A dense channel that knows nothing (random vectors): what the default fusion costs there.
{
  const model = randomEmbeddingModel();
  for (const catalog of catalogs) {
    for (const fusion of [DEFAULT, { method: 'confidence' } as const]) {
      const index = createToolIndex({ embeddingModel: model, fusion });
      await index.upsert(catalog.tools);
      results.row({
        ...{ ...base(catalog), model: 'random', retrieval: 'hybrid', fusion: label(fusion) },
        ...{ default: fusion === DEFAULT, ...asFigures([await evaluate(index, catalog.queries)]) },
      });
    }
  }
}

// 6. Warm starts with the default model.
if (installed.includes(DEFAULT_LOCAL_MODEL)) {
  await using model = localEmbeddingModel({ model: DEFAULT_LOCAL_MODEL });
  const warmSets = values['warm-sets'].split(',');
  for (const catalog of catalogs.filter(({ set }) => warmSets.includes(set))) {
    const row = { ...base(catalog), model: DEFAULT_LOCAL_MODEL };
    const warmStarts = await warmStartRows(model, catalog.tools, catalog.queries);
    for (const warm of warmStarts.rows) results.row({ ...row, retrieval: 'hybrid', ...warm });
    for (const [check, ok] of warmStarts.checks) results.row({ set: catalog.set, check, ok });
  }
}
await results.save();
