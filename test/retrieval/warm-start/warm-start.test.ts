// A warm start's work stays off the query path: a search ranks each query once, checks only the
// candidates it ranked, and everything else that came from snapshots is checked and replaced in
// the background, which ends.
import { join } from 'node:path';
import { createStorage, type Storage } from 'unstorage';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createToolIndex } from '../../../src/retrieval/create-tool-index.ts';
import {
  type EmbeddingCacheEvent,
  createEmbeddingCache,
} from '../../../src/retrieval/embedding-cache.ts';
import { readEvalQueries, readToolCatalog } from '../../../src/retrieval/eval/catalog-file.ts';
import { LexicalIndex } from '../../../src/retrieval/lexical/lexical-index.ts';
import { termCountsOf } from '../../../src/retrieval/lexical/term-counts.ts';
import { encodeAnalysis } from '../../../src/retrieval/snapshots/analysis-snapshot.ts';
import { snapshotCatalog } from '../../../src/retrieval/snapshots/catalog-snapshot.ts';
import { toolFields } from '../../../src/retrieval/tool-fields.ts';
import { toolHash } from '../../../src/retrieval/tool-text.ts';
import { hashingEmbeddingModel } from '../../helpers/hashing-embedding-model.ts';

const dev = join(import.meta.dirname, '..', '..', 'fixtures', 'eval', 'dev');
const catalog = await readToolCatalog(join(dev, 'tools.jsonl'));
const queries = (await readEvalQueries(join(dev, 'queries.jsonl'))).slice(0, 20);

function indexOn(store: Storage, { hybrid = true, rescore = 'after' as 'after' | 'before' } = {}) {
  const events: EmbeddingCacheEvent[] = [];
  const cache = createEmbeddingCache({ store, onEvent: event => events.push(event) });
  const index = createToolIndex({
    cache,
    rescore,
    ...(hybrid ? { embeddingModel: hashingEmbeddingModel({ dimensions: 64 }) } : {}),
  });
  return { index, events };
}

const storeReads = (events: EmbeddingCacheEvent[]) =>
  events.filter(event => event.type === 'read').length;

afterEach(() => vi.restoreAllMocks());

describe('warm start', () => {
  it('ranks each query of a search once, checks only its candidates, and ends its background work', async () => {
    const store = createStorage();
    await indexOn(store).index.upsert(catalog);
    const warm = indexOn(store);
    await warm.index.upsert(catalog);
    const searches = vi.spyOn(LexicalIndex.prototype, 'search');
    const tokenised = vi.spyOn(LexicalIndex.prototype, 'analyze');
    // One lexical ranking for a one-need request; its candidates (at most the pool of 50) are
    // tokenised again to be checked, nothing else.
    await warm.index.search('weather forecast for Paris', { topK: 5 });
    expect(searches).toHaveBeenCalledTimes(1);
    expect(tokenised.mock.calls.length).toBeGreaterThan(0);
    expect(tokenised.mock.calls.length).toBeLessThanOrEqual(50);

    // In the background: every tool's terms checked, every vector read exactly, once.
    await warm.index.rescored();
    expect(tokenised).toHaveBeenCalledTimes(catalog.length);
    const reads = storeReads(warm.events);
    // Then searches do nothing a cold index would not: no tokenising, no store read.
    searches.mockClear();
    tokenised.mockClear();
    for (const { query } of queries) await warm.index.search(query, { topK: 5, mode: 'single' });
    await warm.index.rescored();
    expect(searches).toHaveBeenCalledTimes(queries.length);
    expect(tokenised).not.toHaveBeenCalled();
    expect(storeReads(warm.events)).toBe(reads);
  }, 60_000);

  it('ranks like the cold index once the background work is done, with either rescore policy', async () => {
    const store = createStorage();
    const cold = indexOn(store);
    await cold.index.upsert(catalog);
    const names = async (index: ReturnType<typeof createToolIndex>) => {
      const out: string[][] = [];
      for (const { query } of queries) out.push((await index.search(query)).map(hit => hit.name));
      return out;
    };
    const expected = await names(cold.index);
    for (const rescore of ['after', 'before'] as const) {
      const warm = indexOn(store, { rescore });
      await warm.index.upsert(catalog);
      await warm.index.search(queries[0]!.query);
      await warm.index.rescored();
      expect(await names(warm.index)).toEqual(expected);
    }
  }, 60_000);

  it('finds, in the background, a tool whose terms a forged snapshot left out of every ranking', async () => {
    // A lexical index: tool 5's row holds one made-up term, so no search for tool 5's own words
    // makes it a candidate (and so no search's check sees it).
    const store = createStorage();
    const tools = catalog.slice(0, 300);
    await indexOn(store, { hybrid: false }).index.upsert(tools);
    const [key] = (await store.getKeys()).filter(k => k.includes(':analysis:'));
    const { keys, hash } = snapshotCatalog(tools.map(toolHash));
    const byHash = new Map(tools.map(tool => [toolHash(tool), tool]));
    const analyzer = new LexicalIndex();
    const rows = keys.map(k => termCountsOf(analyzer.analyze(toolFields(byHash.get(k)!))));
    const fields = rows[0]!.lengths.length;
    const lengths = new Float32Array(fields);
    lengths[0] = 1;
    const tf = new Float32Array(fields);
    tf[0] = 1;
    rows[keys.indexOf(toolHash(tools[5]!))] = { terms: ['zzyzx'], tf, lengths };
    const [forged] = encodeAnalysis({ hash, rows, bytes: false })!;
    await store.setItem(key!, forged!);

    const warm = indexOn(store, { hybrid: false });
    await warm.index.upsert(tools);
    const query = tools[5]!.description!;
    const first = await warm.index.search(query, { topK: 3 });
    expect(first.map(hit => hit.name)).not.toContain(tools[5]!.name);
    await warm.index.rescored();
    expect(warm.events).toContainEqual({
      type: 'invalid-entry',
      key,
      reason: 'terms that differ from the tool text',
    });
    expect((await warm.index.search(query, { topK: 1 }))[0]?.name).toBe(tools[5]!.name);
  }, 60_000);

  it('leaves a rebuild for vectors of another length to the background, and a dense index waits', async () => {
    const store = createStorage();
    const tools = catalog.slice(0, 100);
    await createToolIndex({
      embeddingModel: hashingEmbeddingModel({ dimensions: 16 }),
      store,
    }).upsert(tools);
    const model = hashingEmbeddingModel({ dimensions: 64 });
    const dense = createToolIndex({ embeddingModel: model, store, retrieval: 'dense' });
    await dense.upsert(tools);
    const [hit] = await dense.search(tools[3]!.description!, { topK: 1, mode: 'single' });
    expect(hit?.name).toBe(tools[3]!.name);
    // The query, then the stored 16-length vectors, all embedded again, once.
    expect(model.doEmbedCalls.map(call => call.values.length)).toEqual([1, tools.length]);
  }, 60_000);
});
