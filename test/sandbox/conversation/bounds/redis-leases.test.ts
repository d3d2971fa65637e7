// The lease script on a real redis-server, without Docker: the bounds are reserved atomically,
// leases are dropped only when a listing taken after their confirmation misses their container,
// starting leases expire unless renewed, busy interpreters are never offered for eviction, and
// the leases are found through unstorage's redis driver.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createStorage, prefixStorage } from 'unstorage';
import redisDriver from 'unstorage/drivers/redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../../src/errors/invalid-argument-error.ts';
import {
  type Listing,
  type RedisLeases,
  findLeases,
} from '../../../../src/sandbox/conversation/bounds/redis-leases.ts';
import { leaseScenarios } from './lease-scenarios.ts';
import { DockerSandbox } from '../../../../src/sandbox/index.ts';
import {
  type RedisServer,
  describeRedis,
  startRedisServer,
} from '../../../helpers/redis-server.ts';

describeRedis('interpreter leases in Redis', () => {
  let redis: RedisServer;
  let client: Redis;
  let scopes = 0;
  const bounds = { maxAll: 2, maxEngine: 2, maxUser: 1 };
  const id = () => randomBytes(4).toString('hex');
  /** The leases of a fresh scope, on the client given. */
  const fresh = async () => (await findLeases({ client, scope: `s${++scopes}` }))!;
  const listing = async (
    leases: RedisLeases,
    listed: Record<string, string[]> = { e1: [] },
  ): Promise<Listing> => ({ listedAt: await leases.now(), listed });
  const reserve = async (
    leases: RedisLeases,
    at: Listing,
    { lease = id(), user = '', ttlMs = 60_000 } = {},
  ) => ({
    lease,
    answer: await leases.reserve({ id: lease, engine: 'e1', user, listing: at, bounds, ttlMs }),
  });

  beforeAll(async () => {
    redis = await startRedisServer();
    client = new Redis(redis.url);
  });
  afterAll(async () => {
    client?.disconnect();
    await redis?.stop();
  });

  leaseScenarios(fresh);

  it('keeps one JSON string per scope that expires with its last lease', async () => {
    const leases = await fresh();
    const key = `ai-toolbelt:conversation:leases:s${scopes}`;
    const { lease } = await reserve(leases, await listing(leases), { ttlMs: 30_000 });
    expect(JSON.parse((await client.get(key))!)).toMatchObject({
      v: 1,
      leases: { [lease]: { e: 'e1', u: '', c: '' } },
    });
    expect(await client.pttl(key)).toBeGreaterThan(25_000);
    await leases.release(lease);
    expect(await client.exists(key)).toBe(0);
  });

  it('is found through unstorage’s redis driver, not through a prefixed wrapper of it', async () => {
    const store = createStorage({ driver: redisDriver({ url: redis.url, base: 'app' }) });
    try {
      const leases = (await findLeases({ store, scope: 'found' }))!;
      expect(leases).toBeDefined();
      await reserve(leases, await listing(leases));
      expect(await client.exists('app:ai-toolbelt:conversation:leases:found')).toBe(1);
      // Listed through unstorage it is a value like any other.
      expect(await store.getItem('ai-toolbelt:conversation:leases:found')).toMatchObject({ v: 1 });
      expect(await findLeases({ store: prefixStorage(store, 'tenant') })).toBeUndefined();
      expect(await findLeases({ store: createStorage() })).toBeUndefined();
    } finally {
      await store.dispose();
    }
  });

  it('refuses a `conversations.redis` that cannot run scripts', () => {
    const bad = () => new DockerSandbox({ conversations: { redis: {} as never } });
    expect(bad).toThrow(/conversations\.redis/);
    try {
      bad();
    } catch (error) {
      expect(InvalidArgumentError.isInstance(error)).toBe(true);
    }
  });
});
