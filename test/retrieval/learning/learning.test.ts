// Learning from use: the usage field and vector, the store replicas share (a real
// redis-server through unstorage), validation of stored records, bounds and forget.
import { createStorage, type Storage } from 'unstorage';
import memoryDriver from 'unstorage/drivers/memory';
import redisDriver from 'unstorage/drivers/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/errors/invalid-argument-error.ts';
import { createToolIndex } from '../../../src/retrieval/create-tool-index.ts';
import type { LearningEvent } from '../../../src/retrieval/learning/tool-learning.ts';
import {
  decodeUsageRecord,
  encodeUsageRecord,
} from '../../../src/retrieval/learning/usage-record.ts';
import { hashingEmbeddingModel } from '../../helpers/hashing-embedding-model.ts';
import { type RedisServer, describeRedis, startRedisServer } from '../../helpers/redis-server.ts';

const catalog = [
  { name: 'get_weather', description: 'Current weather conditions for a city' },
  { name: 'get_forecast', description: 'Weather forecast for the next days' },
  { name: 'send_email', description: 'Send an email to a recipient' },
  { name: 'create_issue', description: 'Open an issue in a repository' },
  { name: 'generate_bar_chart', description: 'Render a bar chart from labelled values' },
  { name: 'play_music', description: 'Play a song or a playlist' },
];
const names = async (index: ReturnType<typeof createToolIndex>, query: string) =>
  (await index.search(query, { topK: 3 })).map(hit => hit.name);

describe('learning from use (lexical)', () => {
  it('bridges a vocabulary gap: "rain" finds get_weather once a rain request used it', async () => {
    const index = createToolIndex({ learning: true });
    await index.upsert(catalog);
    expect(await names(index, 'will it rain in Oslo tomorrow?')).toEqual([]);
    expect(await index.learn({ query: 'is it going to rain in Paris?', tool: 'get_weather' })).toBe(
      true,
    );
    expect((await names(index, 'will it rain in Oslo tomorrow?'))[0]).toBe('get_weather');
    // terms only: stems of the request's content words, never its text
    expect(index.usage('get_weather')).toEqual({
      requests: [['go', 'rain', 'pari']],
      updatedAt: expect.any(Number),
    });
    await index.forget('get_weather');
    expect(index.usage('get_weather')).toBeUndefined();
    expect(await names(index, 'will it rain in Oslo tomorrow?')).toEqual([]);
  });

  it('learns only the need a tool served in a multi-need request', async () => {
    const index = createToolIndex({ learning: true });
    await index.upsert(catalog);
    await index.learn({
      query: 'chart my spending per month and then play some relaxing jazz',
      tool: 'generate_bar_chart',
    });
    const terms = index.usage('generate_bar_chart')!.requests[0]!;
    expect(terms).toContain('chart');
    expect(terms).not.toContain('jazz');
  });

  it('keeps at most maxRequestsPerTool requests, newest last', async () => {
    const index = createToolIndex({ learning: { maxRequestsPerTool: 3 } });
    await index.upsert(catalog);
    for (const city of ['oslo', 'lima', 'rome', 'kyiv', 'baku'])
      await index.learn({ query: `umbrella needed in ${city}`, tool: 'get_weather' });
    expect(index.usage('get_weather')!.requests.map(r => r.at(-1))).toEqual([
      'rome',
      'kyiv',
      'baku',
    ]);
  });

  it('needs learning to be on, and a tool in the index', async () => {
    const plain = createToolIndex();
    await plain.upsert(catalog);
    await expect(plain.learn({ query: 'rain', tool: 'get_weather' })).rejects.toThrow(
      InvalidArgumentError,
    );
    const index = createToolIndex({ learning: true });
    await index.upsert(catalog);
    await expect(index.learn({ query: 'rain', tool: 'nope' })).rejects.toThrow(
      /`tool`: not in the index/,
    );
  });

  it('stores nothing unless learning is on', async () => {
    const store = createStorage({ driver: memoryDriver() });
    const index = createToolIndex({ store });
    await index.upsert(catalog);
    await index.search('weather in Oslo');
    expect(await store.getKeys('ai-toolbelt:usage')).toEqual([]);
  });
});

describe('learning from use (hybrid)', () => {
  it('moves a learned tool towards its requests in the dense channel too', async () => {
    const index = createToolIndex({
      embeddingModel: hashingEmbeddingModel({ dimensions: 256 }),
      retrieval: 'dense',
      learning: true,
    });
    await index.upsert(catalog);
    const before = await index.search('umbrella tomorrow', { topK: 6 });
    await index.learn({ query: 'do I need an umbrella tomorrow', tool: 'get_forecast' });
    const after = await index.search('umbrella tomorrow', { topK: 6 });
    // no word in common before: cosine 0, ranked by slot only
    expect(before.find(hit => hit.name === 'get_forecast')?.score).toBe(0);
    expect(after[0]).toMatchObject({ name: 'get_forecast', score: expect.any(Number) });
    expect(after[0]!.score).toBeGreaterThan(0);
    expect(index.usage('get_forecast')?.vector?.values).toHaveLength(256);
  });
});

describe('usage records', () => {
  it('round-trips, and rejects what is not a record or breaks the limits', () => {
    const usage = {
      requests: [['rain', 'pari']],
      vector: { modelId: 'm', count: 2, values: new Float32Array([0.6, 0.8]) },
      updatedAt: 5,
    };
    const encoded = encodeUsageRecord(usage);
    expect(encoded.startsWith('aitb-use1|')).toBe(true);
    expect(decodeUsageRecord(encoded, { maxRequests: 10 })).toEqual({ usage });
    const invalid = (value: unknown) =>
      (decodeUsageRecord(value, { maxRequests: 10 }) as { invalid?: string }).invalid;
    expect(invalid({ r: [] })).toBe('not a usage record');
    expect(invalid('aitb-use1|{')).toMatch(/not JSON/);
    expect(invalid('aitb-use1|{"r":[["<script>"]],"u":1}')).toBe('a term is not a word');
    expect(invalid('aitb-use1|{"r":[],"v":{"n":1,"e":"aitb-emb1|2|m|AAAAAAAAAAA="},"u":1}')).toBe(
      'vector: a zero vector',
    );
    const many = `aitb-use1|${JSON.stringify({ r: Array.from({ length: 30 }, (_, i) => [`w${i}`]), u: 1 })}`;
    const decoded = decodeUsageRecord(many, { maxRequests: 10 }) as {
      usage: { requests: string[][] };
    };
    expect(decoded.usage.requests).toHaveLength(10);
    expect(decoded.usage.requests[9]).toEqual(['w29']);
  });
});

describeRedis('learned usage shared through redis-server', () => {
  let redis: RedisServer;
  const stores: Storage[] = [];
  const storeOf = () => {
    const store = createStorage({ driver: redisDriver({ url: redis.url }) });
    stores.push(store);
    return store;
  };
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await Promise.all(stores.map(store => store.dispose()));
    await redis?.stop();
  });

  it('a replica picks up what another learned; forget reaches it; corrupt records are refused', async () => {
    const events: LearningEvent[] = [];
    const a = createToolIndex({ store: storeOf(), learning: true });
    await a.upsert(catalog);
    await a.learn({ query: 'will it rain in Lima', tool: 'get_weather' });

    // A second process started later: it loads the usage with the catalog.
    const store = storeOf();
    const b = createToolIndex({ store, learning: { onEvent: e => events.push(e) } });
    await b.upsert(catalog);
    expect((await names(b, 'rain in Quito'))[0]).toBe('get_weather');
    // The stored value holds terms, not the request.
    const raw = String(await store.getItem('ai-toolbelt:usage:get_weather'));
    expect(raw).toContain('"rain"');
    expect(raw).not.toContain('will it rain');

    // A learn on A later reaches B through a sync; so does a forget.
    await a.learn({ query: 'sunny spells in Lima', tool: 'get_weather' });
    expect(await b.syncUsage()).toBe(1);
    expect(b.usage('get_weather')?.requests).toHaveLength(2);
    await a.forget('get_weather');
    expect(await b.syncUsage()).toBe(1);
    expect(b.usage('get_weather')).toBeUndefined();

    await store.setItem('ai-toolbelt:usage:send_email', 'aitb-use1|{"r":"oops"}');
    const c = createToolIndex({ store: storeOf(), learning: { onEvent: e => events.push(e) } });
    await c.upsert(catalog);
    expect(c.usage('send_email')).toBeUndefined();
    expect(events).toContainEqual({
      type: 'invalid-entry',
      key: 'ai-toolbelt:usage:send_email',
      reason: '"r" (requests) is not an array',
    });
  });

  it('keeps learning in memory when the store is down, and says so', async () => {
    const events: LearningEvent[] = [];
    const store = createStorage({
      driver: redisDriver({
        url: 'redis://127.0.0.1:1',
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
      }),
    });
    stores.push(store);
    const index = createToolIndex({
      store,
      learning: { onEvent: e => events.push(e), timeoutMs: 500 },
    });
    await index.upsert(catalog);
    await index.learn({ query: 'will it rain in Lima', tool: 'get_weather' });
    expect(index.usage('get_weather')?.requests).toHaveLength(1);
    expect(events.some(e => e.type === 'store-error')).toBe(true);
  });
});
