// One side of bench:middleware's warm-start rows, in a fresh process (so neither index is laid out
// in a heap the other one shaped): build a hybrid index, cold (from the model, nothing stored) or
// warm (from the snapshots a fill left in the store folder), then answer SEARCHES searches, each
// after a turn of the event loop as a server's requests come. Prints one JSON line.
//
//   MODE=fill|cold|warm SIZE=1000 STORE_DIR=... OPENAI_BASE_URL=... node bench/warm-start-case.ts
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { createStorage } from 'unstorage';
import fsLiteDriver from 'unstorage/drivers/fs-lite';
import { readEvalQueries, readToolCatalog } from '../src/retrieval/eval/catalog-file.ts';
import { createToolIndex } from '../src/retrieval/create-tool-index.ts';
import type { ToolDescriptor } from '../src/retrieval/types.ts';
import { nextTurn } from '../src/util/next-turn.ts';

const { MODE = 'cold', SIZE = '1000', STORE_DIR, OPENAI_BASE_URL, SEARCHES = '1000' } = process.env;
const evalDir = join(import.meta.dirname, '..', 'test', 'fixtures', 'eval', 'dev');
const catalog = await readToolCatalog(join(evalDir, 'tools.jsonl'));
const queries = await readEvalQueries(join(evalDir, 'queries.jsonl'));
const size = Number(SIZE);
const tools: ToolDescriptor[] = Array.from({ length: size }, (_, i) => {
  const tool = catalog[i % catalog.length]!;
  return {
    ...tool,
    name: i < catalog.length ? tool.name : `${tool.name}_${Math.floor(i / catalog.length)}`,
  };
});
const embeddingModel = createOpenAI({ baseURL: OPENAI_BASE_URL, apiKey: 'bench' }).embedding(
  'text-embedding-3-small',
);
const store =
  MODE === 'cold' ? undefined : createStorage({ driver: fsLiteDriver({ base: STORE_DIR! }) });
const index = createToolIndex({ embeddingModel, ...(store ? { store } : {}) });
const loadStarted = performance.now();
await index.upsert(tools);
const loadMs = performance.now() - loadStarted;
if (MODE === 'fill') {
  console.log(JSON.stringify({ mode: MODE, loadMs }));
  process.exit(0);
}

const times: number[] = [];
let backgroundDoneBySearch: number | null = null;
const count = Number(SEARCHES);
for (let i = 0; i < count; i++) {
  await nextTurn();
  const started = performance.now();
  await index.searchWithLeaders(queries[i % queries.length]!.query, { topK: 5 });
  times.push(performance.now() - started);
  if (i === 0) void index.rescored().then(() => (backgroundDoneBySearch = times.length));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  JSON.stringify({
    mode: MODE,
    loadMs,
    firstSearchMs: times[0],
    search901to1000Ms: median(times.slice(900, 1000)),
    backgroundDoneBySearch,
  }),
);
