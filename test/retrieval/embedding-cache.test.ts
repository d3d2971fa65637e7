import { appendFile, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStorage, type Storage } from 'unstorage';
import { describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors/store-error.ts';
import { InvalidArgumentError } from '../../src/errors/invalid-argument-error.ts';
import { createToolIndex } from '../../src/retrieval/create-tool-index.ts';
import {
  type EmbeddingCacheEvent,
  createEmbeddingCache,
  embeddingCacheKey,
} from '../../src/retrieval/embedding-cache.ts';
import { encodeEmbeddingRecord } from '../../src/retrieval/store/embedding-record.ts';
import { toolEmbeddingText } from '../../src/retrieval/tool-text.ts';
import { embeddedCount, hashingEmbeddingModel } from '../helpers/hashing-embedding-model.ts';

const WORDS = (
  'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november ' +
  'oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber basil cedar dune'
).split(' ');
const tools = WORDS.map((word, i) => ({ name: `tool_${i}`, description: `${word} widgets` }));
const MODEL = 'mock-provider:hashing-test';
const tempFile = async (name: string) =>
  join(await mkdtemp(join(tmpdir(), 'toolbelt-cache-')), name);
const storeKey = (text: string) => `ai-toolbelt:embeddings:${embeddingCacheKey(MODEL, text)}`;

describe('embedding cache file', () => {
  it('persists to disk so a restart re-embeds nothing', async () => {
    const path = join(await tempFile('nested'), 'embeddings.jsonl');
    const first = hashingEmbeddingModel();
    await createToolIndex({ embeddingModel: first, cache: path }).upsert(tools);
    expect(embeddedCount(first)).toBe(30);

    const second = hashingEmbeddingModel(); // same model id: a restarted process
    const index = createToolIndex({ embeddingModel: second, cache: path });
    await index.upsert(tools);
    expect(embeddedCount(second)).toBe(0);
    expect((await index.search('hotel widgets', { topK: 1 }))[0]?.name).toBe('tool_7');
    // The query embedding stays in memory: user text never reaches the file.
    expect(embeddedCount(second)).toBe(1);
    expect((await readFile(path, 'utf8')).trim().split('\n')).toHaveLength(30);
  });

  it('keys by model id, so another model never reuses vectors', async () => {
    expect(embeddingCacheKey('a', 'text')).not.toBe(embeddingCacheKey('b', 'text'));
    expect(embeddingCacheKey('openai.embedding:text-embedding-3-small', 'x')).toMatch(
      /^openai\.embedding:text-embedding-3-small:[\w-]{43}$/,
    );
    const path = await tempFile('e.jsonl');
    await createToolIndex({
      embeddingModel: hashingEmbeddingModel({ modelId: 'one' }),
      cache: path,
    }).upsert(tools);
    const other = hashingEmbeddingModel({ modelId: 'two' });
    await createToolIndex({ embeddingModel: other, cache: path }).upsert(tools);
    expect(embeddedCount(other)).toBe(30);
  });

  it('survives a torn last line and garbage', async () => {
    const path = await tempFile('e.jsonl');
    const cache = createEmbeddingCache({ path });
    await cache.write({ modelId: 'm', entries: [{ text: 'a', vector: Float32Array.of(1, 2, 3) }] });
    await appendFile(path, '{"k":"k2","v":"AAAA');
    const reloaded = createEmbeddingCache({ path });
    const [a, b] = await reloaded.read({ modelId: 'm', texts: ['a', 'b'] });
    expect(Array.from(a!)).toEqual([1, 2, 3]);
    expect(b).toBeUndefined();
    await writeFile(path, 'not json\n');
    expect(await createEmbeddingCache({ path }).read({ modelId: 'm', texts: ['a'] })).toEqual([
      undefined,
    ]);
    expect(await readFile(path, 'utf8')).toBe('not json\n');
  });

  it('reports an unwritable file and keeps working from memory', async () => {
    const events: EmbeddingCacheEvent[] = [];
    const dir = await tempFile('dir');
    await writeFile(dir, 'a file where a folder should be');
    const model = hashingEmbeddingModel();
    const index = createToolIndex({
      embeddingModel: model,
      cache: join(dir, 'e.jsonl'),
      onCacheEvent: event => events.push(event),
    });
    await index.upsert(tools);
    expect((await index.search('delta widgets', { topK: 1 }))[0]?.name).toBe('tool_3');
    const failure = events.find(event => event.type === 'store-error');
    expect(failure).toMatchObject({ type: 'store-error', source: 'file' });
    expect(StoreError.isInstance(failure?.type === 'store-error' && failure.error)).toBe(true);
  });
});

describe('embedding cache in memory', () => {
  it('evicts the least recently used entries beyond maxEntries', async () => {
    const cache = createEmbeddingCache({ maxEntries: 2 });
    const entries = ['a', 'b', 'c'].map((text, i) => ({ text, vector: Float32Array.of(i + 1) }));
    await cache.write({ modelId: 'm', entries });
    const [a, , c] = await cache.read({ modelId: 'm', texts: ['a', 'b', 'c'] });
    expect(a).toBeUndefined();
    expect(Array.from(c!)).toEqual([3]);
  });
});

describe('embedding cache on an unstorage store', () => {
  const filled = async () => {
    const store = createStorage();
    const first = hashingEmbeddingModel();
    await createToolIndex({ embeddingModel: first, store }).upsert(tools);
    expect(embeddedCount(first)).toBe(30);
    return store;
  };
  const indexOn = (store: Storage, events: EmbeddingCacheEvent[] = []) => {
    const model = hashingEmbeddingModel();
    const index = createToolIndex({
      embeddingModel: model,
      store,
      onCacheEvent: event => events.push(event),
    });
    return { model, index, events };
  };

  it('stores one record per tool under prefix + model + content hash, and reads them in one batch', async () => {
    const store = await filled();
    const keys = await store.getKeys();
    expect(keys).toHaveLength(30);
    const text = toolEmbeddingText(tools[0]!);
    expect(await store.getItem(storeKey(text))).toMatch(`aitb-emb1|64|${MODEL}|`);

    const { model, index, events } = indexOn(store);
    await index.upsert(tools);
    expect(embeddedCount(model)).toBe(0);
    expect(events).toEqual([
      { type: 'read', source: 'store', texts: 30, hits: 30, invalid: 0, ms: expect.any(Number) },
    ]);
  });

  it('re-embeds only a changed tool', async () => {
    const store = await filled();
    const { model, index } = indexOn(store);
    const changed = tools.map((tool, i) => (i === 4 ? { ...tool, description: 'new text' } : tool));
    await index.upsert(changed);
    expect(model.doEmbedCalls.map(call => call.values)).toEqual([[toolEmbeddingText(changed[4]!)]]);
    expect(await store.getKeys()).toHaveLength(31);
  });

  it('never uses a vector of another model, dimension or a corrupt one, and replaces it', async () => {
    const store = await filled();
    const texts = tools.slice(0, 6).map(toolEmbeddingText);
    await store.setItem(
      storeKey(texts[0]!),
      encodeEmbeddingRecord(MODEL, new Float32Array(32).fill(1)),
    );
    await store.setItem(
      storeKey(texts[1]!),
      encodeEmbeddingRecord('other:model', new Float32Array(64).fill(1)),
    );
    await store.setItem(storeKey(texts[2]!), `aitb-emb1|64|${MODEL}|AAAA`);
    await store.setItem(
      storeKey(texts[3]!),
      encodeEmbeddingRecord(MODEL, new Float32Array(64).fill(Number.NaN)),
    );
    await store.setItem(storeKey(texts[4]!), { model: MODEL, dimensions: 64, vector: 'AAAA' });
    const good = encodeEmbeddingRecord(MODEL, new Float32Array(64).fill(1));
    await store.setItem(storeKey(texts[5]!), `${good.slice(0, 60)}!${good.slice(61)}`);

    const { model, index, events } = indexOn(store);
    await index.upsert(tools);
    expect(model.doEmbedCalls.flatMap(call => call.values).sort()).toEqual([...texts].sort());
    const reasons = events.flatMap(event => (event.type === 'invalid-entry' ? [event.reason] : []));
    expect(reasons.sort()).toEqual(
      [
        '32 dimensions, expected 64',
        'made by other:model',
        '3 bytes for 64 dimensions',
        'NaN or Infinity in the vector',
        'not an embedding record',
        'not base64',
      ].sort(),
    );
    for (const text of texts)
      expect(await store.getItem(storeKey(text))).toMatch(`aitb-emb1|64|${MODEL}|`);
    expect((await index.search('alpha widgets', { topK: 1 }))[0]?.name).toBe('tool_0');
  });

  it('trusts the model over a store that agrees on the wrong dimension', async () => {
    const store = createStorage();
    // A whole store written by the same model id with another output size (e.g. a `dimensions` setting).
    await createToolIndex({
      embeddingModel: hashingEmbeddingModel({ dimensions: 16 }),
      store,
    }).upsert(tools);
    const { model, index } = indexOn(store);
    await index.upsert(tools);
    expect(embeddedCount(model)).toBe(0); // nothing to compare with yet
    // The query's own 64-dimension vector shows the stored 16 are stale: this search ranks
    // lexically while all are embedded again, once, in the background.
    const [hit] = await index.search('juliet widgets', { topK: 1 });
    expect(hit?.name).toBe('tool_9');
    await index.rescored();
    expect(embeddedCount(model)).toBe(31);
    const [dense] = await createToolIndex({ embeddingModel: model, store, retrieval: 'dense' })
      .upsert(tools)
      .then(() => index.search('juliet widgets', { topK: 1 }));
    expect(dense?.name).toBe('tool_9');
    expect(await store.getItem(storeKey(toolEmbeddingText(tools[0]!)))).toMatch(
      `aitb-emb1|64|${MODEL}|`,
    );
  });

  it('embeds again when the store fails or hangs, reports it, and rests the store', async () => {
    const base = createStorage();
    let calls = 0;
    const broken = {
      ...base,
      getItems: async () => {
        calls++;
        throw new Error('ECONNREFUSED 127.0.0.1:6379');
      },
      setItems: () => new Promise<void>(() => {}), // never answers
    } as unknown as Storage;
    const events: EmbeddingCacheEvent[] = [];
    const model = hashingEmbeddingModel();
    const index = createToolIndex({
      embeddingModel: model,
      cache: createEmbeddingCache({
        store: broken,
        timeoutMs: 50,
        retryAfterMs: 60_000,
        onEvent: event => events.push(event),
      }),
    });
    await index.upsert(tools);
    expect(embeddedCount(model)).toBe(30);
    expect((await index.search('charlie widgets', { topK: 1 }))[0]?.name).toBe('tool_2');
    const errors = events.flatMap(event => (event.type === 'store-error' ? [event.error] : []));
    expect(errors.map(error => [error.operation, error.reason])).toEqual([['read', 'failed']]);
    expect(errors[0]?.message).toContain('ECONNREFUSED');
    // Resting: the next batch does not wait for the store again.
    await index.upsert([{ name: 'extra', description: 'one more' }]);
    expect(calls).toBe(1);

    const hanging = createEmbeddingCache({
      store: broken,
      timeoutMs: 50,
      onEvent: event => events.push(event),
    });
    await hanging.write({ modelId: 'm', entries: [{ text: 'a', vector: Float32Array.of(1) }] });
    expect(events.at(-1)).toMatchObject({
      type: 'store-error',
      error: { operation: 'write', reason: 'timeout' },
    });
  });

  it('stops waiting for a hanging store when the caller aborts', async () => {
    const hanging = {
      ...createStorage(),
      getItems: () => new Promise(() => {}),
    } as unknown as Storage;
    const events: EmbeddingCacheEvent[] = [];
    const cache = createEmbeddingCache({ store: hanging, onEvent: event => events.push(event) });
    const controller = new AbortController();
    const reading = cache.read({ modelId: 'm', texts: ['a'], abortSignal: controller.signal });
    controller.abort(new Error('client went away'));
    await expect(reading).rejects.toThrow('client went away');
    expect(events).toEqual([]);
  });

  it('rejects a store and a path together, and a store that is not unstorage', () => {
    expect(() => createEmbeddingCache({ store: createStorage(), path: 'x' })).toThrow(
      InvalidArgumentError,
    );
    expect(() => createEmbeddingCache({ store: {} as Storage })).toThrow(/unstorage Storage/);
    expect(() =>
      createToolIndex({
        embeddingModel: hashingEmbeddingModel(),
        store: createStorage(),
        cache: 'x',
      }),
    ).toThrow(/either `store` or `cache`/);
  });
});
