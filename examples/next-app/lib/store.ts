import type { Storage } from 'unstorage';

/**
 * The app's shared key-value store (an unstorage `Storage`): Redis when
 * `REDIS_URL` is set, so tool embeddings survive cold starts and are shared by
 * every instance; none (memory) otherwise. Any unstorage driver works the
 * same way (Upstash, Vercel KV, Cloudflare KV). `description` names it without
 * credentials, for the log.
 *
 * @example
 * ```ts
 * const { store } = await storeFromEnv();
 * const index = createToolIndex({ embeddingModel, store });
 * ```
 */
export async function storeFromEnv(
  env = process.env,
): Promise<{ store?: Storage; description: string }> {
  if (!env.REDIS_URL) {
    return { description: 'memory (set REDIS_URL to keep embeddings across cold starts)' };
  }
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
  return {
    store: createStorage({ driver }),
    description: `Redis at ${new URL(env.REDIS_URL).host}`,
  };
}
