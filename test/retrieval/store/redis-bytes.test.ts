// Snapshot chunks as bytes through the Redis client of unstorage's redis driver, on a real
// redis-server: under the keys the driver itself uses, with its expiry, and read back whole.
import { createStorage, prefixStorage, type Storage } from 'unstorage';
import redisDriver from 'unstorage/drivers/redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SNAPSHOT_CHUNK_ROWS } from '../../../src/retrieval/snapshots/catalog-snapshot.ts';
import { createEmbeddingCache } from '../../../src/retrieval/embedding-cache.ts';
import { redisBytes } from '../../../src/retrieval/store/redis-bytes.ts';
import { type RedisServer, describeRedis, startRedisServer } from '../../helpers/redis-server.ts';

type Client = {
  ttl(key: string): Promise<number>;
  getBuffer(key: string): Promise<Uint8Array | null>;
  keys(pattern: string): Promise<string[]>;
};

describeRedis('snapshot bytes on redis-server', () => {
  let redis: RedisServer;
  const stores: Storage[] = [];
  // A mount below the root and a driver with its own base: both shape the key in Redis.
  const mounted = (db: number) => {
    const storage = createStorage();
    const driver = redisDriver({ url: `${redis.url}/${db}`, base: 'app' });
    storage.mount('cache', driver);
    stores.push(storage);
    return { storage, client: driver.getInstance!() as unknown as Client };
  };

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    for (const store of stores) await store.dispose();
    await redis?.stop();
  });

  it('write under the driver’s own keys, which its API then finds, lists and removes', async () => {
    const { storage, client } = mounted(1);
    const key = 'cache:emb:snapshot:m:h:0';
    const bytes = (await redisBytes(storage, key))!;
    expect(bytes).toBeDefined();
    const value = Uint8Array.from({ length: 1000 }, (_, i) => (i * 37) % 256); // not UTF-8
    await bytes.write([{ key, bytes: value }], 60);
    // The probe that checked the keys is gone.
    expect(await client.keys('*')).toEqual(['app:emb:snapshot:m:h:0']);
    expect(await client.ttl('app:emb:snapshot:m:h:0')).toBeGreaterThan(50);
    expect(await storage.hasItem(key)).toBe(true);
    expect(await storage.getKeys('cache:emb')).toEqual([key]);
    const [back, absent] = await bytes.read([key, 'cache:emb:snapshot:m:h:1']);
    expect(back).toEqual(Buffer.from(value));
    expect(absent).toBeUndefined();
    await storage.removeItem(key);
    expect(await bytes.read([key])).toEqual([undefined]);
  });

  it('are not used for other drivers, a cluster (one MGET cannot span slots) or a storage without mounts', async () => {
    expect(await redisBytes(createStorage(), 'a:b')).toBeUndefined();
    const storage = createStorage();
    const cluster = {
      isCluster: true,
      mgetBuffer: async () => [],
      set: async () => 'OK',
      del: async () => 0,
    };
    storage.mount('c', { name: 'redis', getInstance: () => cluster, ...createStorage() } as never);
    expect(await redisBytes(storage, 'c:x')).toBeUndefined();
    const { getItems, setItems } = createStorage();
    expect(await redisBytes({ getItems, setItems } as unknown as Storage, 'a:b')).toBeUndefined();
  });

  it('are not used while the probe cannot be written, and probed again next time', async () => {
    let allowed = false;
    const client = {
      mgetBuffer: async () => [],
      set: async () => {
        if (!allowed) throw new Error('NOPERM');
        return 'OK';
      },
      del: async () => 1,
    };
    const driver = {
      name: 'redis',
      getInstance: () => client,
      hasItem: async () => true,
      getItem: async () => null,
      setItem: async () => {},
      removeItem: async () => {},
      getKeys: async () => [],
    };
    const storage = createStorage();
    storage.mount('c', driver);
    expect(await redisBytes(storage, 'c:x')).toBeUndefined();
    allowed = true;
    expect(await redisBytes(storage, 'c:x')).toBeDefined();
  });

  it('are not used where the storage does not find values under the driver’s keys (prefixStorage)', async () => {
    const { storage, client } = mounted(3);
    // prefixStorage hands out its storage's mounts as they are, without its prefix.
    const tenant = prefixStorage(storage, 'cache:tenant1');
    expect(await redisBytes(tenant, 'emb:snapshot:0')).toBeUndefined();
    expect(await redisBytes(storage, 'cache:tenant1:emb:snapshot:0')).toBeDefined();
    expect(await client.keys('*')).toEqual([]); // no probe left behind
  });

  it('keep a catalog snapshot as raw int8, a quarter less than base64, read back as it was', async () => {
    const { storage, client } = mounted(2);
    const events: { type: string; invalid?: number; hits?: number }[] = [];
    const cache = createEmbeddingCache({
      store: storage,
      prefix: 'cache:emb',
      onEvent: event => events.push(event),
    });
    const dimensions = 64;
    const texts = Array.from({ length: SNAPSHOT_CHUNK_ROWS + 10 }, (_, i) => `tool ${i}`);
    const vectors = texts.map((_, i) =>
      Float32Array.from({ length: dimensions }, (_, j) => Math.sin(i * dimensions + j)),
    );
    await cache.writeSnapshot!({ modelId: 'm', keys: texts, vectors });
    const [first] = (await client.keys('app:emb:snapshot:*')).sort();
    const stored = (await client.getBuffer(first!))!;
    const header = Buffer.from(stored).toString('latin1').split('|').slice(0, 7).join('|').length;
    expect(stored.length - header - 1).toBe(SNAPSHOT_CHUNK_ROWS * (4 + dimensions));

    const read = await cache.readSnapshot!({ modelId: 'm', keys: texts });
    expect(read).toHaveLength(texts.length);
    read!.forEach((direction, i) => {
      const exact = vectors[i]!;
      let dot = 0;
      let a = 0;
      let b = 0;
      for (let j = 0; j < dimensions; j++) {
        dot += direction[j]! * exact[j]!;
        a += direction[j]! ** 2;
        b += exact[j]! ** 2;
      }
      expect(dot / Math.sqrt(a * b)).toBeGreaterThan(0.9999);
    });
    expect(events.filter(event => event.type === 'read')).toEqual([
      expect.objectContaining({ hits: texts.length, invalid: 0 }),
    ]);
  });
});
