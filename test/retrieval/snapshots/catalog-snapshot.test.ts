// Whole-catalog snapshots in the embedding store: an unchanged catalog loads in one store read
// (int8 vectors), and searches rescore their candidates with the exact vectors: before ranking
// (`rescore: 'before'`, a warm index ranks exactly like the one that embedded the catalog), or
// after it, in the background (the default: the next searches rank exactly).
import { join } from 'node:path';
import { MockEmbeddingModelV4 } from 'ai/test';
import { createStorage, type Storage } from 'unstorage';
import { describe, expect, it } from 'vitest';
import { readEvalQueries, readToolCatalog } from '../../../src/retrieval/eval/catalog-file.ts';
import {
  SNAPSHOT_CHUNK_ROWS,
  decodeSnapshotChunk,
  encodeSnapshot,
  snapshotCatalog,
  snapshotVectors,
} from '../../../src/retrieval/snapshots/catalog-snapshot.ts';
import { createToolIndex } from '../../../src/retrieval/create-tool-index.ts';
import {
  type EmbeddingCacheEvent,
  createEmbeddingCache,
} from '../../../src/retrieval/embedding-cache.ts';
import { toolEmbeddingKey, toolEmbeddingText, toolHash } from '../../../src/retrieval/tool-text.ts';
import type { CatalogTexts, Embedder } from '../../../src/retrieval/dense/embedder.ts';
import type { ToolDescriptor } from '../../../src/retrieval/types.ts';
import {
  embeddedCount,
  hashEmbed,
  hashingEmbeddingModel,
} from '../../helpers/hashing-embedding-model.ts';

const dev = join(import.meta.dirname, '..', '..', 'fixtures', 'eval', 'dev');
// A tool's row in its catalog's snapshot is found by this key.
const snapshotKey = (tool: ToolDescriptor) => toolEmbeddingKey(toolHash(tool));
const catalog = await readToolCatalog(join(dev, 'tools.jsonl'));
const queries = (await readEvalQueries(join(dev, 'queries.jsonl'))).slice(0, 40);
const DIMENSIONS = 256;
const model = () => hashingEmbeddingModel({ dimensions: DIMENSIONS });

/** An index on `store` that records its cache events. */
function indexOn(
  store: Storage,
  embeddingModel = model(),
  { rescore = 'before', ...options }: { maxSnapshots?: number; rescore?: 'after' | 'before' } = {},
) {
  const events: EmbeddingCacheEvent[] = [];
  const cache = createEmbeddingCache({ store, ...options, onEvent: event => events.push(event) });
  return { index: createToolIndex({ embeddingModel, cache, rescore }), events, embeddingModel };
}

// Reads of vectors (the analysis snapshot's reads are tested in analysis-snapshot.test.ts).
const reads = (events: EmbeddingCacheEvent[]) =>
  events.filter(
    (event): event is Extract<EmbeddingCacheEvent, { type: 'read' }> =>
      event.type === 'read' && event.analysis !== true,
  );

async function rankings(index: ReturnType<typeof createToolIndex>) {
  const out: { name: string; score: number }[][] = [];
  for (const { query } of queries) {
    out.push((await index.search(query, { topK: 10 })).map(({ name, score }) => ({ name, score })));
  }
  return out;
}

/** `chunk` with its payload bytes (scales, then int8 codes) changed by `change`. */
function withPayload(chunk: string, change: (bytes: Uint8Array) => void): string {
  const cut = chunk.lastIndexOf('|') + 1;
  const bytes = new Uint8Array(Buffer.from(chunk.slice(cut), 'base64'));
  change(bytes);
  return chunk.slice(0, cut) + Buffer.from(bytes).toString('base64');
}

/**
 * Negates tool `at`'s vector in the one-chunk snapshot of `tools` on `store`: a chunk in the right
 * format, for the right catalog, that was not made from the exact vectors. Returns its key.
 */
async function negateSnapshotRow(
  store: Storage,
  tools: ToolDescriptor[],
  at: number,
): Promise<string> {
  const [key] = (await store.getKeys()).filter(k => k.includes(':snapshot:'));
  const row = snapshotCatalog(tools.map(snapshotKey)).keys.indexOf(snapshotKey(tools[at]!));
  const chunk = String(await store.getItem(key!));
  await store.setItem(
    key!,
    withPayload(chunk, bytes => {
      const codes = new Int8Array(bytes.buffer, tools.length * 4);
      for (let i = row * DIMENSIONS; i < (row + 1) * DIMENSIONS; i++) codes[i] = -codes[i]!;
    }),
  );
  return key!;
}

describe('catalog snapshots', () => {
  it('encode each vector as int8 with its own scale, within half a step of the float32', () => {
    const vectors = Array.from({ length: SNAPSHOT_CHUNK_ROWS + 3 }, (_, i) =>
      Float32Array.from({ length: 8 }, (_, j) => Math.sin(i * 8 + j) * (1 + i)),
    );
    const hash = snapshotCatalog(['a']).hash;
    const at = (chunk: number) => ({ modelId: 'm|with|bars', hash, chunk, total: vectors.length });
    const chunks = encodeSnapshot({ modelId: 'm|with|bars', hash, vectors });
    expect(chunks).toHaveLength(2);
    const decoded = chunks.map((value, chunk) => decodeSnapshotChunk(value, at(chunk)));
    // As bytes (raw payload), and as text read as bytes (a store that hands back bytes, holding
    // a chunk another writer stored as text): the same chunk.
    const bytes = encodeSnapshot({ modelId: 'm|with|bars', hash, vectors, bytes: true });
    expect(bytes[0]!.length).toBeLessThan(chunks[0]!.length);
    bytes.forEach((value, chunk) => {
      expect(decodeSnapshotChunk(value, at(chunk))).toEqual(decoded[chunk]);
      const text = new TextEncoder().encode(chunks[chunk]);
      expect(decodeSnapshotChunk(text, at(chunk))).toEqual(decoded[chunk]);
    });
    expect(decodeSnapshotChunk(bytes[0]!.subarray(0, -1), at(0))).toEqual({
      invalid: 'wrong payload length',
    });
    expect(decodeSnapshotChunk(bytes[0], { ...at(0), modelId: 'other' })).toEqual({
      invalid: 'made by another model',
    });
    const vectorsBack = snapshotVectors(decoded as never);
    vectors.forEach((vector, i) => {
      const step = Math.max(...vector.map(Math.abs)) / 127;
      vector.forEach((x, j) =>
        expect(Math.abs(vectorsBack[i]![j]! - x)).toBeLessThanOrEqual(step / 2 + 1e-6),
      );
    });
    // Another model, another position, a zero vector or a cut payload are refused with a reason.
    expect(decodeSnapshotChunk(chunks[0], { ...at(0), modelId: 'other' })).toEqual({
      invalid: 'made by m|with|bars',
    });
    expect(decodeSnapshotChunk(chunks[1], at(0))).toMatchObject({
      invalid: expect.stringMatching(/^chunk 1 of/),
    });
    const [zero] = encodeSnapshot({ modelId: 'm', hash, vectors: [new Float32Array(8)] });
    expect(decodeSnapshotChunk(zero, { modelId: 'm', hash, chunk: 0, total: 1 })).toEqual({
      invalid: 'a zero or non-finite scale',
    });
    expect(decodeSnapshotChunk(chunks[0]!.slice(0, -8), at(0))).toEqual({
      invalid: 'wrong payload length',
    });
    // A chunk of another catalog of the same size, copied under this catalog's key.
    expect(decodeSnapshotChunk(chunks[0], { ...at(0), hash: snapshotCatalog(['b']).hash })).toEqual(
      { invalid: 'a chunk of another catalog' },
    );
    // A row the encoder cannot have written: zeros (or small codes) under a positive scale.
    const zeroRow = withPayload(chunks[0]!, bytes => bytes.fill(0, SNAPSHOT_CHUNK_ROWS * 4));
    expect(decodeSnapshotChunk(zeroRow, at(0))).toEqual({
      invalid: 'a row whose largest code is 0',
    });
    // In the last row (each row is checked): a -128, which the encoder never writes, or no code
    // reaching 127 (a row scaled down).
    const lastRow = (change: (codes: Int8Array) => void) =>
      withPayload(chunks[0]!, bytes => {
        const [rows, width] = [SNAPSHOT_CHUNK_ROWS, vectors[0]!.length];
        change(new Int8Array(bytes.buffer, rows * 4 + (rows - 1) * width, width));
      });
    const withMin = lastRow(codes => void (codes[5] = -128));
    expect(decodeSnapshotChunk(withMin, at(0))).toEqual({
      invalid: 'a row whose largest code is 128',
    });
    const scaledDown = lastRow(codes => codes.forEach((code, i) => (codes[i] = code >> 1)));
    expect(decodeSnapshotChunk(scaledDown, at(0))).toMatchObject({
      invalid: expect.stringMatching(/^a row whose largest code is (63|64)$/),
    });
    // The older format, without the catalog's hash, reads as a miss.
    const older = chunks[0]!.replace(`aitb-snap2|${hash}|`, 'aitb-snap1|');
    expect(decodeSnapshotChunk(older, at(0))).toEqual({ invalid: 'not a snapshot chunk' });
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
    // Candidates before each answer, the rest in the background: every vector was read again
    // exactly, from the store, and only the queries were embedded.
    await warm.index.rescored();
    const rescored = reads(warm.events).slice(1);
    expect(rescored.length).toBeGreaterThan(1);
    expect(rescored.every(event => !event.snapshot && event.hits === event.texts)).toBe(true);
    expect(rescored.reduce((sum, event) => sum + event.texts, 0)).toBeGreaterThanOrEqual(
      catalog.length,
    );
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
      rescore: 'before',
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

  it('drop a snapshot whose vector points elsewhere than the exact one, and rank like the cold index', async () => {
    const store = createStorage();
    const tools = catalog.slice(0, 100);
    const cold = indexOn(store);
    await cold.index.upsert(tools);
    const expected = await rankings(cold.index);
    const key = await negateSnapshotRow(store, tools, 7);

    const warm = indexOn(store);
    await warm.index.upsert(tools);
    expect(reads(warm.events)[0]).toMatchObject({ snapshot: true, hits: tools.length });
    const got = await rankings(warm.index);
    got.forEach((ranking, q) => {
      expect(ranking.map(hit => hit.name)).toEqual(expected[q]!.map(hit => hit.name));
    });
    expect(warm.events).toContainEqual(
      expect.objectContaining({ type: 'invalid-entry', key, reason: expect.any(String) }),
    );
    // Removed: the next start reads the tools one by one (and writes a new snapshot).
    expect(await store.hasItem(key)).toBe(false);
    const next = indexOn(store);
    await next.index.upsert(tools);
    expect(reads(next.events)[1]).toMatchObject({ texts: tools.length, hits: tools.length });
  }, 60_000);

  it('read every vector of a snapshot exactly once one of them proves wrong', async () => {
    const store = createStorage();
    const tools = catalog.slice(0, 300);
    const cold = indexOn(store);
    await cold.index.upsert(tools);
    const rows = snapshotCatalog(tools.map(snapshotKey)).keys;
    const rowOf = (tool: ToolDescriptor) => rows.indexOf(snapshotKey(tool));
    // Tool 1's row is tool 0's (found by a search for tool 0), tool 2's is negated (a candidate
    // of no search): only reading the whole snapshot again puts tool 2 back.
    const keys = (await store.getKeys()).filter(k => k.includes(':snapshot:')).sort();
    const payloads = await Promise.all(
      keys.map(async k => {
        const value = String(await store.getItem(k));
        return new Uint8Array(Buffer.from(value.slice(value.lastIndexOf('|') + 1), 'base64'));
      }),
    );
    const rowView = (r: number) => {
      const chunk = Math.floor(r / SNAPSHOT_CHUNK_ROWS);
      const count = Math.min(SNAPSHOT_CHUNK_ROWS, rows.length - chunk * SNAPSHOT_CHUNK_ROWS);
      const at = count * 4 + (r % SNAPSHOT_CHUNK_ROWS) * DIMENSIONS;
      const scale = new Float32Array(payloads[chunk]!.buffer, (r % SNAPSHOT_CHUNK_ROWS) * 4, 1);
      return { scale, codes: new Int8Array(payloads[chunk]!.buffer, at, DIMENSIONS) };
    };
    const [zero, one, two] = [0, 1, 2].map(i => rowView(rowOf(tools[i]!)));
    one!.codes.set(zero!.codes);
    one!.scale.set(zero!.scale);
    for (let i = 0; i < DIMENSIONS; i++) two!.codes[i] = -two!.codes[i]!;
    for (const [c, k] of keys.entries()) {
      const value = String(await store.getItem(k));
      const cut = value.lastIndexOf('|') + 1;
      await store.setItem(k, value.slice(0, cut) + Buffer.from(payloads[c]!).toString('base64'));
    }

    const warm = indexOn(store);
    await warm.index.upsert(tools);
    expect(reads(warm.events)[0]).toMatchObject({ snapshot: true, hits: tools.length });
    await warm.index.search(toolEmbeddingText(tools[0]!), { topK: 3 });
    expect(warm.events.filter(event => event.type === 'invalid-entry')).toHaveLength(keys.length);
    // Every tool was read exactly: a search now reads nothing, and tool 2 is found again.
    const before = warm.events.length;
    const hits = await warm.index.search(toolEmbeddingText(tools[2]!), { topK: 3 });
    expect(hits[0]?.name).toBe(tools[2]!.name);
    expect(warm.events.length).toBe(before);
  }, 60_000);

  it('rescore round after round until the best candidates hold no approximate vector', async () => {
    // Approximate vectors a little closer to the query than their exact ones (a cosine of 0.995
    // with them): each round finds new approximate vectors at the head.
    const count = 300;
    const tools = Array.from({ length: count }, (_, i) => ({ name: `tool${i}` }));
    const unit = (angle: number) => Float32Array.of(Math.cos(angle), Math.sin(angle));
    const exact = new Map(tools.map((tool, i) => [toolEmbeddingText(tool), unit(0.1 + 1e-4 * i)]));
    const approximate = new Map(tools.map((tool, i) => [toolEmbeddingText(tool), unit(1e-4 * i)]));
    const embedded: number[] = [];
    const embedder: Embedder = {
      id: 'angles',
      async embed(texts, { purpose = 'tool' } = {}) {
        if (purpose === 'tool') embedded.push(texts.length);
        return texts.map(text => exact.get(text) ?? unit(0));
      },
      async embedCatalog(catalog) {
        const texts = Array.isArray(catalog) ? catalog : (catalog as CatalogTexts).texts();
        return { vectors: texts.map(text => approximate.get(text)!), approximate: true };
      },
    };
    const index = createToolIndex({ embedder, retrieval: 'dense', rescore: 'before' });
    await index.upsert(tools);
    const hits = await index.search('north', { topK: 3 });
    expect(hits.map(hit => hit.name)).toEqual(['tool0', 'tool1', 'tool2']);
    expect(hits[0]!.score).toBeCloseTo(Math.cos(0.1), 6);
    // While approximate vectors remain, a ranking's dense candidates are twice the pool of 50:
    // 100 a round, three rounds, and the search answers with none left.
    expect(embedded).toEqual([100, 100, 100]);
  });

  it('by default, rank a warm start with the snapshot and read the exact vectors after, for the next searches', async () => {
    const store = createStorage();
    const cold = indexOn(store);
    await cold.index.upsert(catalog);
    const expected = await rankings(cold.index);

    const warm = indexOn(store, model(), { rescore: 'after' });
    await warm.index.upsert(catalog);
    const version = warm.index.version;
    const query = queries[0]!.query;
    // The first search waits for no store read: it ranks with the int8 vectors.
    const first = await warm.index.search(query, { topK: 10 });
    expect(reads(warm.events)).toHaveLength(1);
    expect(first.map(hit => hit.name).slice(0, 5)).toEqual(
      expected[0]!.map(hit => hit.name).slice(0, 5),
    );
    // Fused scores are standard scores: int8 vectors move them by well under 1%.
    first.forEach((hit, i) =>
      expect(Math.abs(hit.score / expected[0]![i]!.score - 1)).toBeLessThan(0.01),
    );
    // Then, in the background, every exact vector is read once from the store (its candidates'
    // in the first read), a chunk at a time, and results cached by version expire.
    await warm.index.rescored();
    const rescored = reads(warm.events).slice(1);
    expect(rescored).toHaveLength(Math.ceil(catalog.length / 256));
    expect(rescored.every(event => event.invalid === 0 && !event.snapshot)).toBe(true);
    expect(rescored.every(event => event.hits === event.texts)).toBe(true);
    expect(rescored.reduce((sum, event) => sum + event.texts, 0)).toBe(catalog.length);
    expect(warm.index.version).toBeGreaterThan(version);
    // The same search now ranks exactly like the cold index, and reads nothing more.
    const again = await warm.index.search(query, { topK: 10 });
    await warm.index.rescored();
    expect(reads(warm.events)).toHaveLength(1 + rescored.length);
    again.forEach((hit, i) => {
      expect(hit.name).toBe(expected[0]![i]!.name);
      expect(hit.score).toBeCloseTo(expected[0]![i]!.score, 6);
    });
  }, 60_000);

  it('by default, still drop a snapshot whose vector proves wrong, after the search', async () => {
    const store = createStorage();
    const tools = catalog.slice(0, 100);
    await indexOn(store).index.upsert(tools);
    const key = await negateSnapshotRow(store, tools, 7);
    const warm = indexOn(store, model(), { rescore: 'after' });
    await warm.index.upsert(tools);
    await warm.index.search(toolEmbeddingText(tools[7]!), { topK: 3 });
    await warm.index.rescored();
    expect(warm.events).toContainEqual(
      expect.objectContaining({ type: 'invalid-entry', key, reason: expect.any(String) }),
    );
    expect(await store.hasItem(key)).toBe(false);
    // Every vector was read exactly: tool 7 is found again, with nothing more to read.
    const before = warm.events.length;
    const hits = await warm.index.search(toolEmbeddingText(tools[7]!), { topK: 3 });
    await warm.index.rescored();
    expect(hits[0]?.name).toBe(tools[7]!.name);
    expect(warm.events.length).toBe(before);
  }, 60_000);

  it("refuse a rescore policy other than 'after' or 'before'", () => {
    expect(() => createToolIndex({ rescore: 'never' as 'after' })).toThrow(
      "Invalid argument `rescore`: expected 'after' or 'before'",
    );
  });
});
