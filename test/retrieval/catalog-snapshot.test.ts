// Whole-catalog snapshots in the embedding store: an unchanged catalog loads in one store read
// (int8 vectors), and searches rescore their candidates with the exact vectors, so a warm index
// ranks exactly like the one that embedded the catalog.
import { join } from 'node:path';
import { MockEmbeddingModelV4 } from 'ai/test';
import { createStorage, type Storage } from 'unstorage';
import { describe, expect, it } from 'vitest';
import { readEvalQueries, readToolCatalog } from '../../src/retrieval/catalog-file.ts';
import {
  SNAPSHOT_CHUNK_ROWS,
  decodeSnapshotChunk,
  encodeSnapshot,
  snapshotCatalog,
  snapshotVectors,
} from '../../src/retrieval/catalog-snapshot.ts';
import { createToolIndex } from '../../src/retrieval/create-tool-index.ts';
import {
  type EmbeddingCacheEvent,
  createEmbeddingCache,
} from '../../src/retrieval/embedding-cache.ts';
import { toolEmbeddingText } from '../../src/retrieval/tool-text.ts';
import type { ToolDescriptor } from '../../src/retrieval/types.ts';
import {
  embeddedCount,
  hashEmbed,
  hashingEmbeddingModel,
} from '../helpers/hashing-embedding-model.ts';

const dev = join(import.meta.dirname, '..', 'fixtures', 'eval', 'dev');
const catalog = await readToolCatalog(join(dev, 'tools.jsonl'));
const queries = (await readEvalQueries(join(dev, 'queries.jsonl'))).slice(0, 40);
const DIMENSIONS = 256;
const model = () => hashingEmbeddingModel({ dimensions: DIMENSIONS });

/** An index on `store` that records its cache events. */
function indexOn(
  store: Storage,
  embeddingModel = model(),
  options: { maxSnapshots?: number } = {},
) {
  const events: EmbeddingCacheEvent[] = [];
  const cache = createEmbeddingCache({ store, ...options, onEvent: event => events.push(event) });
  return { index: createToolIndex({ embeddingModel, cache }), events, embeddingModel };
}

const reads = (events: EmbeddingCacheEvent[]) =>
  events.filter(
    (event): event is Extract<EmbeddingCacheEvent, { type: 'read' }> => event.type === 'read',
  );

async function rankings(index: ReturnType<typeof createToolIndex>) {
  const out: { name: string; score: number }[][] = [];
  for (const { query } of queries) {
    out.push((await index.search(query, { topK: 10 })).map(({ name, score }) => ({ name, score })));
  }
  return out;
}

describe('catalog snapshots', () => {
  it('encode each vector as int8 with its own scale, within half a step of the float32', () => {
    const vectors = Array.from({ length: SNAPSHOT_CHUNK_ROWS + 3 }, (_, i) =>
      Float32Array.from({ length: 8 }, (_, j) => Math.sin(i * 8 + j) * (1 + i)),
    );
    const chunks = encodeSnapshot({ modelId: 'm|with|bars', vectors });
    expect(chunks).toHaveLength(2);
    const decoded = chunks.map((value, chunk) =>
      decodeSnapshotChunk(value, { modelId: 'm|with|bars', chunk, total: vectors.length }),
    );
    const vectorsBack = snapshotVectors(decoded as never);
    vectors.forEach((vector, i) => {
      const step = Math.max(...vector.map(Math.abs)) / 127;
      vector.forEach((x, j) =>
        expect(Math.abs(vectorsBack[i]![j]! - x)).toBeLessThanOrEqual(step / 2 + 1e-6),
      );
    });
    // Another model, another position, a zero vector or a cut payload are refused with a reason.
    expect(
      decodeSnapshotChunk(chunks[0], { modelId: 'other', chunk: 0, total: vectors.length }),
    ).toEqual({
      invalid: 'made by m|with|bars',
    });
    expect(
      decodeSnapshotChunk(chunks[1], { modelId: 'm|with|bars', chunk: 0, total: vectors.length }),
    ).toMatchObject({
      invalid: expect.stringMatching(/^chunk 1 of/),
    });
    const [zero] = encodeSnapshot({ modelId: 'm', vectors: [new Float32Array(8)] });
    expect(decodeSnapshotChunk(zero, { modelId: 'm', chunk: 0, total: 1 })).toEqual({
      invalid: 'a zero or non-finite scale',
    });
    expect(
      decodeSnapshotChunk(chunks[0]!.slice(0, -8), {
        modelId: 'm|with|bars',
        chunk: 0,
        total: vectors.length,
      }),
    ).toEqual({
      invalid: 'wrong payload length',
    });
    // The catalog is the set of texts: order and repeats do not change it.
    expect(snapshotCatalog(['b', 'a', 'b']).hash).toBe(snapshotCatalog(['a', 'b']).hash);
    expect(snapshotCatalog(['a', 'b']).hash).not.toBe(snapshotCatalog(['a', 'c']).hash);
  });

  it('load an unchanged catalog in one store read and rank exactly like the cold index', async () => {
    const store = createStorage();
    const cold = indexOn(store);
    await cold.index.upsert(catalog);
    expect(embeddedCount(cold.embeddingModel)).toBe(catalog.length);
    const expected = await rankings(cold.index);

    const warm = indexOn(store);
    await warm.index.upsert(catalog);
    expect(embeddedCount(warm.embeddingModel)).toBe(0);
    expect(reads(warm.events)).toEqual([
      expect.objectContaining({ snapshot: true, texts: catalog.length, hits: catalog.length }),
    ]);
    const got = await rankings(warm.index);
    got.forEach((ranking, q) => {
      expect(ranking.map(hit => hit.name)).toEqual(expected[q]!.map(hit => hit.name));
      ranking.forEach((hit, i) => expect(hit.score).toBeCloseTo(expected[q]![i]!.score, 6));
    });
    // Only candidates were read again, exactly, and only the queries embedded.
    const rescored = reads(warm.events).slice(1);
    expect(rescored.length).toBeGreaterThan(0);
    expect(rescored.every(event => !event.snapshot && event.hits === event.texts)).toBe(true);
    expect(rescored.reduce((sum, event) => sum + event.texts, 0)).toBeLessThan(catalog.length);
    expect(embeddedCount(warm.embeddingModel)).toBe(
      embeddedCount(cold.embeddingModel) - catalog.length,
    );
  }, 60_000);

  it('miss for a changed catalog: only the changed tool is embedded, and the oldest snapshots go', async () => {
    const store = createStorage();
    const versions: ToolDescriptor[][] = [0, 1, 2].map(v =>
      catalog
        .slice(0, 300)
        .map((tool, i) => (i === 0 ? { ...tool, description: `version ${v}` } : tool)),
    );
    const snapshotKeys = async () =>
      (await store.getKeys()).filter(key => key.includes(':snapshot:')).sort();
    await indexOn(store, model(), { maxSnapshots: 2 }).index.upsert(versions[0]!);
    const first = await snapshotKeys();
    expect(first).toHaveLength(Math.ceil(300 / SNAPSHOT_CHUNK_ROWS));

    const second = indexOn(store, model(), { maxSnapshots: 2 });
    await second.index.upsert(versions[1]!);
    expect(second.embeddingModel.doEmbedCalls.flatMap(call => call.values)).toEqual([
      toolEmbeddingText(versions[1]![0]!),
    ]);
    expect(reads(second.events)[0]).toMatchObject({ snapshot: true, hits: 0 });
    expect(reads(second.events)[1]).toMatchObject({ texts: 300, hits: 299 });
    expect(await snapshotKeys()).toHaveLength(2 * first.length);

    await indexOn(store, model(), { maxSnapshots: 2 }).index.upsert(versions[2]!);
    const kept = await snapshotKeys();
    expect(kept).toHaveLength(2 * first.length);
    for (const key of first) expect(kept).not.toContain(key);
    // The newest is read back in one go.
    const warm = indexOn(store, model(), { maxSnapshots: 2 });
    await warm.index.upsert(versions[2]!);
    expect(reads(warm.events)).toEqual([expect.objectContaining({ snapshot: true, hits: 300 })]);
  }, 60_000);

  it('report a corrupt or foreign chunk and read the tools one by one instead', async () => {
    const store = createStorage();
    await indexOn(store).index.upsert(catalog.slice(0, 100));
    const [key] = (await store.getKeys()).filter(k => k.includes(':snapshot:'));
    const chunk = String(await store.getItem(key!));
    for (const forged of [
      chunk.replace('|mock-provider:hashing-test|', '|another:model|'),
      chunk.slice(0, -8),
      'not a snapshot',
    ]) {
      await store.setItem(key!, forged);
      const warm = indexOn(store);
      await warm.index.upsert(catalog.slice(0, 100));
      expect(warm.events).toContainEqual(
        expect.objectContaining({ type: 'invalid-entry', key: key }),
      );
      expect(reads(warm.events)[1]).toMatchObject({ texts: 100, hits: 100 });
      expect(reads(warm.events)[1]).not.toHaveProperty('snapshot');
      expect(embeddedCount(warm.embeddingModel)).toBe(0);
      const hits = await warm.index.search(toolEmbeddingText(catalog[7]!), { topK: 1 });
      expect(hits[0]?.name).toBe(catalog[7]!.name);
    }
  }, 60_000);

  it('rank with the snapshot when the exact vectors cannot be had, and rescore once they can', async () => {
    const store = createStorage();
    const tools = catalog.slice(0, 200);
    await indexOn(store).index.upsert(tools);
    const toolTexts = new Set(tools.map(toolEmbeddingText));
    let failing = true;
    // A model that embeds queries but fails for tool texts, and a store that fails reads.
    const flaky = new MockEmbeddingModelV4({
      modelId: 'hashing-test',
      maxEmbeddingsPerCall: 2048,
      doEmbed: async ({ values }) => {
        if (failing && values.some(value => toolTexts.has(value))) throw new Error('model down');
        return { embeddings: values.map(value => hashEmbed(value, DIMENSIONS)), warnings: [] };
      },
    });
    const events: EmbeddingCacheEvent[] = [];
    const base = createStorage();
    for (const key of await store.getKeys()) await base.setItem(key, await store.getItem(key));
    const flakyStore = {
      ...base,
      getItems: (...args: Parameters<Storage['getItems']>) =>
        failing && events.length > 0
          ? Promise.reject(new Error('store down'))
          : base.getItems(...args),
    } as Storage;
    const index = createToolIndex({
      embeddingModel: flaky,
      cache: createEmbeddingCache({
        store: flakyStore,
        retryAfterMs: 0,
        onEvent: e => events.push(e),
      }),
    });
    await index.upsert(tools);
    // Not a tool's text: the model embeds it.
    const query = `${tools[42]!.description} please`;
    expect((await index.search(query, { topK: 3 }))[0]?.name).toBe(tools[42]!.name);
    expect(events).toContainEqual(expect.objectContaining({ type: 'store-error' }));
    failing = false;
    const before = events.length;
    await index.search(query, { topK: 3 });
    expect(reads(events.slice(before))).toEqual([
      expect.objectContaining({ hits: expect.any(Number), invalid: 0 }),
    ]);
    // Once rescored, the candidates are exact: the same search reads nothing more.
    const after = events.length;
    await index.search(query, { topK: 3 });
    expect(events.length).toBe(after);
  }, 60_000);
});
