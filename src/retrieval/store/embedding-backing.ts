// store/: where embeddings live between starts: the store's records, bytes on Redis, timeouts and
// back-off.
import type { Storage } from 'unstorage';
import { loadNodeFs, loadNodePath } from '../../util/node-fs.ts';
import type { EmbeddingRecord } from './embedding-record.ts';
import { type BytesStore, redisBytes } from './redis-bytes.ts';

/**
 * Where the embedding cache keeps vectors beyond the process: raw values in,
 * raw values out (`undefined` when absent); the cache decodes and checks them.
 * Failures throw; the cache turns them into events.
 */
export interface EmbeddingBacking {
  readonly kind: 'file' | 'store';
  read(keys: readonly string[]): Promise<unknown[]>;
  write(entries: readonly { key: string; record: EmbeddingRecord }[]): Promise<void>;
  /** Deletes keys (snapshots that fell out of use). */
  remove(keys: readonly string[]): Promise<void>;
  /** Where the store keeps bytes as they are (Redis), the values under `key`'s part of it. */
  bytes?(key: string): Promise<BytesStore | undefined>;
}

// Keys per round trip: 256 vectors of 1,536 dimensions are about 2 MB.
const STORE_BATCH = 256;
// Batches in flight at once: the store works on later ones while earlier ones are decoded.
const STORE_PARALLEL = 8;

/**
 * An unstorage `Storage` (Redis, Upstash, Vercel KV, Cloudflare KV, fs,
 * memory...). Reads go through `getItems` (one MGET per batch on Redis),
 * writes through `setItems`; drivers without them fall back to one call per
 * key inside unstorage.
 */
export function storeBacking({
  storage,
  ttlSeconds,
}: {
  /** The store. */
  storage: Storage;
  /** Expiry of written entries, for drivers that support it (Redis, Upstash, Vercel KV). */
  ttlSeconds: number | undefined;
}): EmbeddingBacking {
  return {
    kind: 'store',
    async read(keys) {
      const found = new Map<string, unknown>();
      await inBatches(keys, async batch => {
        for (const { key, value } of await storage.getItems([...batch]))
          if (value !== null && value !== undefined) found.set(key, value);
      });
      return keys.map(key => found.get(key));
    },
    async write(entries) {
      const options = ttlSeconds === undefined ? {} : { ttl: ttlSeconds };
      await inBatches(entries, batch =>
        storage.setItems(
          batch.map(({ key, record }) => ({ key, value: record })),
          options,
        ),
      );
    },
    async remove(keys) {
      await inBatches(keys, async batch => {
        await Promise.all(batch.map(key => storage.removeItem(key)));
      });
    },
    async bytes(key) {
      const bytes = await redisBytes(storage, key);
      return bytes && { read: bytes.read, write: entries => bytes.write(entries, ttlSeconds) };
    },
  };
}

async function inBatches<T>(
  items: readonly T[],
  run: (batch: readonly T[]) => Promise<void>,
): Promise<void> {
  const batches: T[][] = [];
  for (let i = 0; i < items.length; i += STORE_BATCH) batches.push(items.slice(i, i + STORE_BATCH));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < batches.length) await run(batches[next++] as T[]);
  };
  await Promise.all(Array.from({ length: Math.min(STORE_PARALLEL, batches.length) }, worker));
}

/**
 * A JSON-lines file, read once and appended to: one read at start-up beats one
 * file per key for a catalog of thousands of tools. A torn last line (a crash
 * mid-append) and lines of other versions are skipped, not fatal. Node only:
 * `node:fs` is loaded on first use, so the rest of the root entry runs on edge
 * runtimes.
 */
export function fileBacking({ path }: { path: string }): EmbeddingBacking {
  let loaded: Promise<Map<string, unknown>> | undefined;
  let writes: Promise<void> = Promise.resolve();
  const load = (): Promise<Map<string, unknown>> =>
    (loaded ??= loadNodeFs()
      .then(({ readFile }) => readFile(/* turbopackIgnore: true */ path, 'utf8'))
      .then(
        text => {
          const lines = new Map<string, unknown>();
          for (const line of text.split('\n')) {
            const entry = parseLine(line);
            if (entry !== undefined) lines.set(entry.key, entry.record);
          }
          return lines;
        },
        (error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return new Map<string, unknown>();
          loaded = undefined; // a later read tries again
          throw error;
        },
      ));
  return {
    kind: 'file',
    async read(keys) {
      const lines = await load();
      return keys.map(key => lines.get(key));
    },
    async write(entries) {
      const lines = await load().catch(() => new Map<string, unknown>());
      for (const { key, record } of entries) lines.set(key, record);
      const text = entries.map(({ key, record }) => `${JSON.stringify({ k: key, r: record })}\n`);
      // Serialise appends so concurrent batches never interleave within a line.
      writes = writes
        .catch(() => {})
        .then(async () => {
          const [{ appendFile, mkdir }, { dirname }] = await Promise.all([
            loadNodeFs(),
            loadNodePath(),
          ]);
          await mkdir(dirname(path), { recursive: true });
          await appendFile(path, text.join(''));
        });
      await writes;
    },
    // Lines are only ever appended; nothing the file holds is removed.
    async remove() {},
  };
}

function parseLine(line: string): { key: string; record: unknown } | undefined {
  if (line.trim() === '') return undefined;
  try {
    const { k, r } = JSON.parse(line) as { k?: unknown; r?: unknown };
    return typeof k === 'string' ? { key: k, record: r } : undefined;
  } catch {
    return undefined; // a torn line from an interrupted append
  }
}
