// The lexical (BM25F) index at 1k / 10k / 100k tools: the BFCL dev catalog repeated under new
// names (so terms repeat across tools as in a real catalog), tokenised ahead as an upsert does.
// Prints, per size: the time to index the analysed tools, the memory the index adds to them (JS
// heap and typed arrays, after a full collection, so only what it keeps), its (term, tool) pairs,
// and the search time of the dev set's 100 requests (top-10). One JSON line per size.
// Usage: node --expose-gc bench/lexical.ts [--sizes 1000,10000,100000]
// (writes bench/results/lexical.json)
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readEvalQueries, readToolCatalog } from '../src/retrieval/eval/catalog-file.ts';
import { LexicalIndex } from '../src/retrieval/lexical/lexical-index.ts';
import { toolFields } from '../src/retrieval/tool-fields.ts';
import { benchResults } from './bench-results.ts';

const { values } = parseArgs({
  options: { sizes: { type: 'string', default: '1000,10000,100000' } },
});
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc (npm run bench:lexical does)');
const results = benchResults({ name: 'lexical', command: 'npm run bench:lexical' });
const dev = join(import.meta.dirname, '..', 'test', 'fixtures', 'eval', 'dev');
const catalog = await readToolCatalog(join(dev, 'tools.jsonl'));
const queries = (await readEvalQueries(join(dev, 'queries.jsonl'))).map(({ query }) => query);

const round = (x: number): number => Math.round(x * 1000) / 1000;
// The JS heap and the typed arrays' memory outside it (a larger typed array's bytes live there).
const heldBytes = (): number => {
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};
const percentile = (samples: number[], p: number): number => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
};

for (const size of values.sizes.split(',').map(Number)) {
  const index = new LexicalIndex();
  const analyzed = Array.from({ length: size }, (_, i) => {
    const tool = catalog[i % catalog.length]!;
    const copy = Math.floor(i / catalog.length);
    return index.analyze(toolFields(copy === 0 ? tool : { ...tool, name: `${tool.name}_${copy}` }));
  });
  gc();
  const heldBefore = heldBytes();
  const started = performance.now();
  analyzed.forEach((fields, slot) => index.set(slot, fields));
  const indexMs = performance.now() - started;
  // The tokenised tools are still held: what the heap grew by is the index's own structure.
  gc();
  const indexBytes = heldBytes() - heldBefore;
  const pairs = analyzed.reduce((sum, fields) => sum + new Set(fields.tokens.flat()).size, 0);
  analyzed.length = 0;

  for (const query of queries.slice(0, 10)) index.search(query, 10); // warm-up
  const samples = queries.map(query => {
    const at = performance.now();
    index.search(query, 10);
    return performance.now() - at;
  });
  results.row({
    tools: size,
    indexMs: round(indexMs),
    bytesPerTool: Math.round(indexBytes / size),
    bytesPerPair: round(indexBytes / pairs),
    pairsPerTool: round(pairs / size),
    searchP50Ms: round(percentile(samples, 50)),
    searchP99Ms: round(percentile(samples, 99)),
  });
}
await results.save();
