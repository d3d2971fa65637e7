// One model of bench:embedding, in a fresh process so its memory figures hold that model alone:
// load it, embed short queries one at a time, then a 3,000-tool catalog through `embedMany`,
// watching the main thread's event loop, then search a hybrid index of that catalog (the query
// embedded and both channels ranked and fused). Prints one JSON line.
//
//   MODEL=all-MiniLM-L6-v2 [THREADS=2] node --expose-gc bench/embedding-case.ts
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { embedMany } from 'ai';
import { localEmbeddingModel } from '../src/local-embedding/index.ts';
import { createToolIndex } from '../src/retrieval/create-tool-index.ts';
import { readEvalQueries, readToolCatalog } from '../src/retrieval/eval/catalog-file.ts';
import { toolEmbeddingText } from '../src/retrieval/tool-text.ts';

const { MODEL, THREADS } = process.env;
const TOOLS = 3000;
const WARM_UP = 20;
const QUERIES = 200;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc (bench/embedding.ts does)');
// After a full collection, so the figure is what the process holds rather than garbage it has
// not collected yet.
const rssMiB = (): number => {
  gc();
  return process.memoryUsage().rss / 2 ** 20;
};
const percentile = (samples: number[], p: number): number => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

// Real tool definitions (BFCL live functions), repeated under new names up to 3,000, as
// bench:cold-start does; their texts are what an index embeds.
const dev = join(import.meta.dirname, '..', 'test', 'fixtures', 'eval', 'dev');
const catalog = await readToolCatalog(join(dev, 'tools.jsonl'));
const tools = Array.from({ length: TOOLS }, (_, i) => {
  const tool = catalog[i % catalog.length]!;
  const copy = Math.floor(i / catalog.length);
  return copy === 0 ? tool : { ...tool, name: `${tool.name}_${copy}` };
});
const texts = tools.map(toolEmbeddingText);
const queries = (await readEvalQueries(join(dev, 'queries.jsonl'))).map(({ query }) => query);

const rssBeforeLoad = rssMiB();
const loadStarted = performance.now();
const model = localEmbeddingModel({
  ...(MODEL ? { model: MODEL } : {}),
  ...(THREADS ? { threads: Number(THREADS) } : {}),
});
await model.load();
const loadMs = performance.now() - loadStarted;
const rssAfterLoad = rssMiB();

// One request's query at a time, as a search embeds it; a different text each call, so no
// layer below can answer from what it just computed.
const query = (i: number) => queries[i % queries.length]!;
// As a search embeds it: a query (with the model's query prefix, if it has one).
const asQuery = { local: { inputType: 'query' } };
for (let i = 0; i < WARM_UP; i++)
  await model.doEmbed({ values: [query(i)], providerOptions: asQuery });
const queryMs: number[] = [];
let queryTokens = 0;
for (let i = 0; i < QUERIES; i++) {
  const started = performance.now();
  const { usage } = await model.doEmbed({ values: [query(WARM_UP + i)], providerOptions: asQuery });
  queryMs.push(performance.now() - started);
  queryTokens += usage?.tokens ?? 0;
}

// The main thread stays free while the worker embeds: its timers' delay is what a server's
// other requests would wait meanwhile.
const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();
const catalogStarted = performance.now();
const { embeddings, usage } = await embedMany({ model, values: texts, maxParallelCalls: 1 });
const catalogMs = performance.now() - catalogStarted;
delay.disable();
if (embeddings.length !== TOOLS) throw new Error(`embedded ${embeddings.length} of ${TOOLS}`);
const rssAfterCatalog = rssMiB();

// A whole search as the middleware makes one: the query embedded, then both channels over the
// 3,000 tools, fused (the default fusion), top 5. Other requests than above (the index keeps the
// vectors of queries it embedded), each once.
const index = createToolIndex({ embeddingModel: model });
await index.upsert(tools);
const azure = join(dev, '..', 'azure-mcp', 'queries.jsonl');
const requests = (await readEvalQueries(azure)).map(({ query }) => query);
if (requests.length < WARM_UP + QUERIES) throw new Error(`${azure}: too few queries`);
for (let i = 0; i < WARM_UP; i++) await index.search(requests[i]!, { topK: 5 });
const searchMs: number[] = [];
for (let i = 0; i < QUERIES; i++) {
  const started = performance.now();
  await index.search(requests[WARM_UP + i]!, { topK: 5 });
  searchMs.push(performance.now() - started);
}
await model.close();

console.log(
  JSON.stringify({
    model: model.modelId,
    dimensions: model.dimensions,
    loadMs,
    queryP50Ms: percentile(queryMs, 50),
    queryP95Ms: percentile(queryMs, 95),
    queryMeanTokens: queryTokens / QUERIES,
    searchP50Ms: percentile(searchMs, 50),
    searchP95Ms: percentile(searchMs, 95),
    catalogTools: TOOLS,
    catalogS: catalogMs / 1000,
    toolsPerS: TOOLS / (catalogMs / 1000),
    catalogMeanTokens: (usage.tokens ?? 0) / TOOLS,
    eventLoopP99Ms: delay.percentile(99) / 1e6,
    eventLoopMaxMs: delay.max / 1e6,
    rssBeforeLoadMiB: rssBeforeLoad,
    rssAfterLoadMiB: rssAfterLoad,
    rssAfterCatalogMiB: rssAfterCatalog,
  }),
);
