// The shared embedding store on a real redis-server through unstorage's Redis
// driver (ioredis), with embeddings over HTTP from the fake OpenAI-compatible
// server. "A second process" is a real second process.
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createOpenAI } from '@ai-sdk/openai';
import { createStorage, type Storage } from 'unstorage';
import redisDriver from 'unstorage/drivers/redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { toolSelection } from '../../../src/middleware/selection/tool-selection.ts';
import { createToolIndex } from '../../../src/retrieval/create-tool-index.ts';
import {
  type EmbeddingCacheEvent,
  createEmbeddingCache,
  embeddingCacheKey,
} from '../../../src/retrieval/embedding-cache.ts';
import { encodeEmbeddingRecord } from '../../../src/retrieval/store/embedding-record.ts';
import { toolEmbeddingText } from '../../../src/retrieval/tool-text.ts';
import type { ToolDescriptor } from '../../../src/retrieval/types.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../../fixtures/fake-openai/fake-openai-server.ts';
import { type RedisServer, describeRedis, startRedisServer } from '../../helpers/redis-server.ts';

const run = promisify(execFile);
const child = join(
  import.meta.dirname,
  '..',
  '..',
  'fixtures',
  'embedding-store',
  'select-once.ts',
);
const MODEL = 'openai.embedding:text-embedding-3-small';
const QUERY = 'what is the weather forecast in Oslo';
const NOUNS = (
  'invoice calendar repository ticket playlist recipe flight parcel contract budget ' +
  'sensor printer mailbox folder spreadsheet podcast warehouse vehicle patient course'
).split(' ');
const VERBS = 'list create update delete archive export'.split(' ');
const catalog: ToolDescriptor[] = [
  { name: 'get_weather', description: 'Weather forecast for a city', server: 'weather' },
  ...NOUNS.flatMap(noun =>
    VERBS.map(verb => ({
      name: `${verb}_${noun}`,
      description: `${verb} a ${noun} in the ${noun} service`,
      server: noun,
    })),
  ),
];

type ChildReport = {
  added: number;
  retrieval: string;
  selected: string[];
  /** How many of `events` came during the upsert (the rest during the selection). */
  upsertEvents: number;
  events: Array<EmbeddingCacheEvent | { type: 'store-error'; error: string }>;
};

describeRedis('embedding store on redis-server', () => {
  let redis: RedisServer;
  let fake: FakeOpenAI;
  let dir: string;
  const stores: Storage[] = [];

  beforeAll(async () => {
    [redis, fake, dir] = await Promise.all([
      startRedisServer(),
      startFakeOpenAI(),
      mkdtemp(join(tmpdir(), 'toolbelt-redis-')),
    ]);
  });
  afterAll(async () => {
    await Promise.all(stores.map(store => store.dispose()));
    await redis?.stop();
    await fake?.close();
  });

  const storeOn = (base: string): Storage => {
    const driver = redisDriver({ url: redis.url, base });
    // ioredis prints every failed reconnect unless someone listens; the test reads our event instead.
    (driver.getInstance?.() as { on(event: 'error', listener: () => void): void }).on(
      'error',
      () => {},
    );
    const store = createStorage({ driver });
    stores.push(store);
    return store;
  };
  // Tool texts the fake server embedded since `from` (the query is a user turn, not a tool).
  const embeddedTools = (from: number): string[] =>
    fake.requests
      .slice(from)
      .filter(request => request.api === 'embeddings')
      .flatMap(request => (request.body as { input: string[] }).input)
      .filter(text => text !== QUERY);
  const runProcess = async (base: string, tools: ToolDescriptor[]): Promise<ChildReport> => {
    const file = join(dir, `${base}-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(file, JSON.stringify(tools));
    const { stdout } = await run(process.execPath, [child], {
      env: {
        ...process.env,
        REDIS_URL: redis.url,
        REDIS_BASE: base,
        OPENAI_BASE_URL: fake.baseURL,
        CATALOG: file,
        QUERY,
      },
    });
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as ChildReport;
  };

  it('a second process with the same catalog re-embeds 0 tools in one store read; one changed tool re-embeds 1', async () => {
    let from = fake.requests.length;
    const first = await runProcess('second-process', catalog);
    expect(embeddedTools(from)).toHaveLength(catalog.length);
    expect(first).toMatchObject({ added: catalog.length, retrieval: 'hybrid' });
    expect(first.selected).toContain('get_weather');
    // A vector per tool, the catalog's snapshot (one chunk) with the model's snapshot list, and
    // the catalog's analysis (its tokenised text, one chunk) with its list.
    const keys = await storeOn('second-process').getKeys();
    const snapshotKeys = /:(snapshots?|analysis|analyses):/;
    expect(keys.filter(key => !snapshotKeys.test(key))).toHaveLength(catalog.length);
    expect(keys.filter(key => /:snapshot:/.test(key))).toHaveLength(1);
    expect(keys.filter(key => /:snapshots:/.test(key))).toHaveLength(1);
    expect(keys.filter(key => /:analysis:/.test(key))).toHaveLength(1);
    expect(keys.filter(key => /:analyses:/.test(key))).toHaveLength(1);

    from = fake.requests.length;
    const second = await runProcess('second-process', catalog);
    expect(embeddedTools(from)).toEqual([]);
    expect(second.selected).toEqual(first.selected);
    // The upsert: the analysis snapshot and the vector snapshot, one read each. After the
    // selection, in the background: every exact vector (its candidates' first), in one read
    // (the catalog is smaller than one chunk).
    expect(second.events.slice(0, second.upsertEvents)).toEqual([
      expect.objectContaining({
        ...{ type: 'read', snapshot: true, analysis: true },
        ...{ hits: catalog.length, invalid: 0 },
      }),
      expect.objectContaining({ type: 'read', snapshot: true, hits: catalog.length, invalid: 0 }),
    ]);
    expect(second.events[1]).not.toHaveProperty('analysis');
    const rescored = second.events.slice(second.upsertEvents);
    expect(rescored).toEqual([expect.objectContaining({ type: 'read', invalid: 0 })]);
    const [read] = rescored as Extract<EmbeddingCacheEvent, { type: 'read' }>[];
    expect(read!.hits).toBe(read!.texts);
    expect(read!.texts).toBe(catalog.length);

    from = fake.requests.length;
    const changed = catalog.map(tool =>
      tool.name === 'get_weather'
        ? { ...tool, description: 'Weather forecast and rain radar' }
        : tool,
    );
    const third = await runProcess('second-process', changed);
    expect(embeddedTools(from)).toEqual([toolEmbeddingText(changed[0]!)]);
    expect(third.selected).toContain('get_weather');
  }, 60_000);

  it('ignores and replaces a vector with another dimension in the store', async () => {
    const store = storeOn('dimensions');
    const embeddingModel = createOpenAI({ baseURL: fake.baseURL, apiKey: 'test' }).embedding(
      'text-embedding-3-small',
    );
    await createToolIndex({ embeddingModel, store }).upsert(catalog);
    const key = `ai-toolbelt:embeddings:${embeddingCacheKey(MODEL, toolEmbeddingText(catalog[3]!))}`;
    await store.setItem(key, encodeEmbeddingRecord(MODEL, new Float32Array(32).fill(0.5)));

    const events: EmbeddingCacheEvent[] = [];
    const from = fake.requests.length;
    // Key by key (the snapshot would hold the right vector): the per-tool records' own check.
    const cache = createEmbeddingCache({
      store,
      maxSnapshots: 0,
      onEvent: event => events.push(event),
    });
    const index = createToolIndex({ embeddingModel, cache });
    await index.upsert(catalog);
    expect(embeddedTools(from)).toEqual([toolEmbeddingText(catalog[3]!)]);
    expect(events).toContainEqual({
      type: 'invalid-entry',
      key,
      reason: '32 dimensions, expected 64',
    });
    expect(await store.getItem(key)).toMatch(`aitb-emb1|64|${MODEL}|`);
  }, 30_000);

  it('keeps selecting when Redis stops mid-way, and reports the store error', async () => {
    const store = storeOn('outage');
    const events: EmbeddingCacheEvent[] = [];
    const embeddingModel = createOpenAI({ baseURL: fake.baseURL, apiKey: 'test' }).embedding(
      'text-embedding-3-small',
    );
    const cache = createEmbeddingCache({
      store,
      timeoutMs: 1_000,
      onEvent: event => events.push(event),
    });
    const index = createToolIndex({ embeddingModel, cache });
    await index.upsert(catalog.slice(0, 60));
    expect(events.filter(event => event.type === 'store-error')).toEqual([]);

    await redis.stop();
    // New tools appear (an MCP server's list_changed) and the next turn selects among all of them.
    const selection = toolSelection({ index, topK: 3 });
    const params = await selection.middleware.transformParams!({
      type: 'generate',
      model: undefined as never,
      params: {
        prompt: [{ role: 'user', content: [{ type: 'text', text: 'archive the podcast' }] }],
        tools: catalog.map(tool => ({
          type: 'function' as const,
          name: tool.name,
          description: tool.description ?? '',
          inputSchema: { type: 'object' as const },
        })),
      },
    });
    expect(params.tools?.map(tool => tool.name)).toContain('archive_podcast');
    const failure = events.find(event => event.type === 'store-error');
    expect(failure).toMatchObject({ type: 'store-error', source: 'store' });
    expect(failure?.type === 'store-error' && failure.error.operation).toBe('read');
    await redis.start();
  }, 30_000);
});
