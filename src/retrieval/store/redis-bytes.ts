import type { Storage } from 'unstorage';

/** Values kept as bytes in a store that has them, beside (not through) its unstorage API. */
export type BytesStore = {
  /** The values of `keys` (same order), undefined where absent. */
  read(keys: readonly string[]): Promise<(Uint8Array | undefined)[]>;
  /** Writes the values, expiring after `ttlSeconds` when given. */
  write(entries: readonly { key: string; bytes: Uint8Array }[], ttlSeconds?: number): Promise<void>;
};

// The byte-level commands of an ioredis client, which unstorage's redis driver holds.
type RedisClient = {
  isCluster?: boolean;
  mgetBuffer(...keys: string[]): Promise<(Uint8Array | null)[]>;
  set(key: string, value: Uint8Array | string, ...args: (string | number)[]): Promise<unknown>;
  del(...keys: string[]): Promise<number>;
};

type RedisDriver = {
  name?: string;
  options?: { base?: string; ttl?: number };
  getInstance?: () => unknown;
};

/**
 * Reads and writes bytes straight through the Redis client of the unstorage mount that holds
 * `key` (any of the keys the values go under), under the very keys its driver uses (so the
 * driver still finds, lists, expires and removes them). Undefined for any other driver, for Redis
 * Cluster (one MGET cannot span slots), and where a value written under the key worked out here
 * is not found through `storage` (a wrapper such as unstorage's `prefixStorage` hands out its
 * mounts without its prefix): checked once per storage and mount. unstorage's own API moves text
 * only; bytes through it become base64, which costs a warm start a third more to move plus its
 * decoding, and a string on the JavaScript heap.
 *
 * @example
 * ```ts
 * const bytes = await redisBytes(storage, 'ai-toolbelt:embeddings:snapshot:m:h:0');
 * const [value] = (await bytes?.read(['ai-toolbelt:embeddings:snapshot:m:h:0'])) ?? [];
 * ```
 */
export async function redisBytes(storage: Storage, key: string): Promise<BytesStore | undefined> {
  if (typeof storage.getMount !== 'function') return undefined;
  const mount = storage.getMount(storageKey(key));
  const driver = mount.driver as RedisDriver;
  if (driver.name !== 'redis' || typeof driver.getInstance !== 'function') return undefined;
  const client = driver.getInstance() as Partial<RedisClient> | undefined;
  const commands = ['mgetBuffer', 'set', 'del'] as const;
  if (!commands.every(command => typeof client?.[command] === 'function')) return undefined;
  if (client?.isCluster === true) return undefined;
  const redis = client as RedisClient;
  const base = (driver.options?.base ?? '').replace(/:$/, '');
  // unstorage normalises the key, hands the part below the mount to the driver, which joins
  // it to its base.
  const redisKey = (key: string): string => {
    const normalised = storageKey(key);
    if (!normalised.startsWith(mount.base))
      throw new RangeError(`${key} is not under ${mount.base}`);
    return [base, normalised.slice(mount.base.length)].map(driverKey).filter(Boolean).join(':');
  };
  if (!(await sameKeys({ storage, mount: mount.base, redis, redisKey, key }))) return undefined;
  return {
    async read(keys) {
      if (keys.length === 0) return [];
      const values = await redis.mgetBuffer(...keys.map(redisKey));
      return values.map(value => value ?? undefined);
    },
    async write(entries, ttlSeconds = driver.options?.ttl) {
      await Promise.all(
        entries.map(({ key, bytes }) =>
          ttlSeconds
            ? redis.set(redisKey(key), asBuffer(bytes), 'EX', ttlSeconds)
            : redis.set(redisKey(key), asBuffer(bytes)),
        ),
      );
    },
  };
}

const checked = new WeakMap<Storage, Map<string, Promise<boolean>>>();

// Whether a value written under the key worked out for `key` is the one `storage` finds there.
function sameKeys({
  storage,
  mount,
  redis,
  redisKey,
  key,
}: {
  storage: Storage;
  mount: string;
  redis: RedisClient;
  redisKey: (key: string) => string;
  key: string;
}): Promise<boolean> {
  let byMount = checked.get(storage);
  if (byMount === undefined) checked.set(storage, (byMount = new Map()));
  let check = byMount.get(mount);
  if (check === undefined) {
    const probe = `${storageKey(key)}:aitb-probe-${Math.random().toString(36).slice(2)}`;
    // One round trip: the client sends commands in the order they are made, on one connection,
    // so the storage's read (through the same client) sees the write, and the removal follows.
    // A warm start waits for this before it reads its snapshot.
    check = (async () => {
      const written = redis.set(redisKey(probe), '1', 'EX', 60);
      const found = storage.hasItem(probe);
      void redis.del(redisKey(probe)).catch(() => {}); // else it expires
      // Both awaited together: a failed write leaves no rejection of the read unhandled.
      return (await Promise.all([written, found]))[1];
    })().catch(() => {
      // Text then (a user allowed to read only still reads); asked again next time.
      byMount.delete(mount);
      return false;
    });
    byMount.set(mount, check);
  }
  return check;
}

type NodeBuffer = { from(buffer: ArrayBufferLike, offset: number, length: number): Uint8Array };

// ioredis sends a Buffer as bytes but any other Uint8Array as its text ("97,105,…"); a Redis
// client is Node's, so Buffer is there (a view, nothing copied).
function asBuffer(bytes: Uint8Array): Uint8Array {
  const buffer = (globalThis as { Buffer?: NodeBuffer }).Buffer;
  return buffer ? buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes;
}

// As unstorage's storage normalises item keys.
function storageKey(key: string): string {
  return (key.split('?')[0] ?? '').replace(/[/\\]/g, ':').replace(/:+/g, ':').replace(/^:|:$/g, '');
}

// As unstorage's drivers normalise the parts they join.
function driverKey(key: string): string {
  return key.replace(/[:/\\]/g, ':').replace(/^[:/\\]|[:/\\]$/g, '');
}
