// redis/: reaching the Redis behind an app's unstorage store, through its redis driver's own client.
import type { Storage } from 'unstorage';

/** The commands of an ioredis client that finding it needs (it writes and removes a probe). */
type ProbeCommands = {
  set(key: string, value: string | Uint8Array, ...args: (string | number)[]): Promise<unknown>;
  del(...keys: string[]): Promise<number>;
};

/**
 * A client that runs Lua scripts as ioredis does (`eval(script, numKeys, ...keys, ...args)`):
 * an `ioredis` `Redis` or `Cluster`, or anything of that shape. Typed by shape, so ioredis is
 * not a dependency of the package.
 */
export type RedisScriptClient = {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
};

/** The Redis client of a store's mount, and the key its driver uses for a storage key. */
export type RedisStoreClient<Client> = {
  client: Client & ProbeCommands & { isCluster?: boolean };
  /** The key in Redis of a storage key under the mount (as the driver itself makes it). */
  redisKey(key: string): string;
  /** The driver's default expiry, seconds (its `ttl` option). */
  ttlSeconds: number | undefined;
};

type RedisDriver = {
  name?: string;
  options?: { base?: string; ttl?: number };
  getInstance?: () => unknown;
};

/**
 * The Redis client of the unstorage mount that holds `key`, when that mount is unstorage's redis
 * driver and its client has `commands` (and `set`, `del`; a Redis Cluster client only with
 * `cluster`), with the key its driver uses for any storage key under the mount. Undefined for any
 * other driver, and where a value written under the key worked out here is not found through
 * `storage` (a wrapper such as unstorage's `prefixStorage` hands out its mounts without its
 * prefix): checked once per storage and mount. Throws when that check cannot be made (Redis
 * unreachable, a user not allowed to write), and checks again on the next call.
 *
 * @example
 * ```ts
 * const found = await redisStoreClient<RedisScriptClient>({ storage, key: 'app:leases', commands: ['eval'] });
 * await found?.client.eval('return 1', 1, found.redisKey('app:leases'));
 * ```
 */
export async function redisStoreClient<Client>({
  storage,
  key,
  commands,
  cluster = true,
}: {
  /** The app's store. */
  storage: Partial<Pick<Storage, 'hasItem' | 'getMount'>>;
  /** A storage key under the mount wanted (any of the keys the caller will use). */
  key: string;
  /** The client's methods the caller calls. */
  commands: readonly string[];
  /** Whether a Redis Cluster client will do. */
  cluster?: boolean;
}): Promise<RedisStoreClient<Client> | undefined> {
  if (typeof storage.getMount !== 'function' || typeof storage.hasItem !== 'function')
    return undefined;
  const mount = storage.getMount(storageKey(key));
  const driver = mount.driver as RedisDriver;
  if (driver.name !== 'redis' || typeof driver.getInstance !== 'function') return undefined;
  const client = driver.getInstance() as Record<string, unknown> | undefined;
  if (![...commands, 'set', 'del'].every(command => typeof client?.[command] === 'function'))
    return undefined;
  const redis = client as RedisStoreClient<Client>['client'];
  if (redis.isCluster === true && !cluster) return undefined;
  const base = (driver.options?.base ?? '').replace(/:$/, '');
  // unstorage normalises the key, hands the part below the mount to the driver, which joins
  // it to its base.
  const redisKey = (key: string): string => {
    const normalised = storageKey(key);
    if (!normalised.startsWith(mount.base))
      throw new RangeError(`${key} is not under ${mount.base}`);
    return [base, normalised.slice(mount.base.length)].map(driverKey).filter(Boolean).join(':');
  };
  const probed = { storage: storage as Pick<Storage, 'hasItem'>, mount: mount.base };
  if (!(await sameKeys({ ...probed, redis, redisKey, key }))) return undefined;
  return { client: redis, redisKey, ttlSeconds: driver.options?.ttl };
}

const checked = new WeakMap<object, Map<string, Promise<boolean>>>();

// Whether a value written under the key worked out for `key` is the one `storage` finds there.
function sameKeys({
  storage,
  mount,
  redis,
  redisKey,
  key,
}: {
  storage: Pick<Storage, 'hasItem'>;
  mount: string;
  redis: ProbeCommands;
  redisKey: (key: string) => string;
  key: string;
}): Promise<boolean> {
  const byMount = checked.get(storage) ?? new Map<string, Promise<boolean>>();
  checked.set(storage, byMount);
  let check = byMount.get(mount);
  if (check === undefined) {
    const probe = `${storageKey(key)}:aitb-probe-${Math.random().toString(36).slice(2)}`;
    // One round trip: the client sends commands in the order they are made, on one connection,
    // so the storage's read (through the same client) sees the write, and the removal follows.
    check = (async () => {
      const written = redis.set(redisKey(probe), '1', 'EX', 60);
      const found = storage.hasItem(probe);
      void redis.del(redisKey(probe)).catch(() => {}); // else it expires
      // Both awaited together: a failed write leaves no rejection of the read unhandled.
      return (await Promise.all([written, found]))[1];
    })();
    // Not known: asked again next time.
    check.catch(() => byMount.delete(mount));
    byMount.set(mount, check);
  }
  return check;
}

// As unstorage's storage normalises item keys.
function storageKey(key: string): string {
  return (key.split('?')[0] ?? '').replace(/[/\\]/g, ':').replace(/:+/g, ':').replace(/^:|:$/g, '');
}

// As unstorage's drivers normalise the parts they join.
function driverKey(key: string): string {
  return key.replace(/[:/\\]/g, ':').replace(/^[:/\\]|[:/\\]$/g, '');
}
