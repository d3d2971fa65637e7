import type { Storage } from 'unstorage';
import { redisStoreClient } from '../../util/redis/redis-store-client.ts';

/** Values kept as bytes in a store that has them, beside (not through) its unstorage API. */
export type BytesStore = {
  /** The values of `keys` (same order), undefined where absent. */
  read(keys: readonly string[]): Promise<(Uint8Array | undefined)[]>;
  /** Writes the values, expiring after `ttlSeconds` when given. */
  write(entries: readonly { key: string; bytes: Uint8Array }[], ttlSeconds?: number): Promise<void>;
};

// The byte-level command of an ioredis client, which unstorage's redis driver holds.
type BytesClient = { mgetBuffer(...keys: string[]): Promise<(Uint8Array | null)[]> };

/**
 * Reads and writes bytes straight through the Redis client of the unstorage mount that holds
 * `key` (any of the keys the values go under), under the very keys its driver uses (so the
 * driver still finds, lists, expires and removes them): see `redisStoreClient`. Undefined for any
 * other driver, for Redis Cluster (one MGET cannot span slots), where the driver's keys cannot be
 * worked out, and while they cannot be checked (asked again next time; a user allowed to read
 * only still reads, as text). unstorage's own API moves text only; bytes through it become
 * base64, which costs a warm start a third more to move plus its decoding, and a string on the
 * JavaScript heap.
 *
 * @example
 * ```ts
 * const bytes = await redisBytes(storage, 'ai-toolbelt:embeddings:snapshot:m:h:0');
 * const [value] = (await bytes?.read(['ai-toolbelt:embeddings:snapshot:m:h:0'])) ?? [];
 * ```
 */
export async function redisBytes(storage: Storage, key: string): Promise<BytesStore | undefined> {
  // A warm start waits for the check before it reads its snapshot.
  const found = await redisStoreClient<BytesClient>({
    ...{ storage, key, commands: ['mgetBuffer'] },
    cluster: false,
  }).catch(() => undefined);
  if (found === undefined) return undefined;
  const { client: redis, redisKey, ttlSeconds: driverTtl } = found;
  return {
    async read(keys) {
      if (keys.length === 0) return [];
      const values = await redis.mgetBuffer(...keys.map(redisKey));
      return values.map(value => value ?? undefined);
    },
    async write(entries, ttlSeconds = driverTtl) {
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

type NodeBuffer = { from(buffer: ArrayBufferLike, offset: number, length: number): Uint8Array };

// ioredis sends a Buffer as bytes but any other Uint8Array as its text ("97,105,…"); a Redis
// client is Node's, so Buffer is there (a view, nothing copied).
function asBuffer(bytes: Uint8Array): Uint8Array {
  const buffer = (globalThis as { Buffer?: NodeBuffer }).Buffer;
  return buffer ? buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes;
}
