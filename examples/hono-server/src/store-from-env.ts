import type { Storage } from 'unstorage';

/** What {@link storeFromEnv} found. */
export type StoreSetup = {
  /** The shared key-value store, or undefined to keep things in memory. */
  store?: Storage;
  /** Where it is (without credentials), for the log. */
  description: string;
};

/**
 * The app's shared key-value store (an unstorage `Storage`): Redis when
 * `REDIS_URL` is set, so tool embeddings survive restarts and are shared by
 * replicas; memory otherwise. Any unstorage driver works the same way
 * (Upstash, Vercel KV, Cloudflare KV, fs). The Redis driver (ioredis) is
 * loaded only when asked for.
 *
 * @example
 * ```ts
 * const { store } = await storeFromEnv(process.env);
 * const index = createToolIndex({ embeddingModel, store });
 * ```
 */
export async function storeFromEnv(env: Record<string, string | undefined>): Promise<StoreSetup> {
  if (!env.REDIS_URL) {
    return {
      description: 'memory (set REDIS_URL to keep embeddings across restarts and replicas)',
    };
  }
  const url = new URL(env.REDIS_URL);
  const [{ createStorage }, { default: redisDriver }] = await Promise.all([
    import('unstorage'),
    import('unstorage/drivers/redis'),
  ]);
  const driver = redisDriver({ url: env.REDIS_URL });
  // ioredis prints each failed reconnect unless someone listens; the index reports
  // store failures itself (onCacheEvent) and embeds again meanwhile.
  (driver.getInstance?.() as { on(event: 'error', listener: () => void): void }).on(
    'error',
    () => {},
  );
  return { store: createStorage({ driver }), description: `Redis at ${url.host}` };
}
