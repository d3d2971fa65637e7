import { createHash } from 'node:crypto';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Where embeddings are remembered, keyed by {@link embeddingCacheKey}.
 * Implement it to share a cache across processes (Redis, a KV store).
 */
export interface EmbeddingCache {
  get(key: string): Promise<Float32Array | undefined> | Float32Array | undefined;
  set(entries: readonly { key: string; vector: Float32Array }[]): Promise<void> | void;
}

/** Options of {@link createEmbeddingCache}. */
export type EmbeddingCacheOptions = {
  /**
   * A file to persist embeddings in (JSON lines, appended), so a restart does
   * not re-embed the catalog. Memory only when omitted.
   */
  path?: string;
  /** Most entries kept in memory; the oldest are evicted first. */
  maxEntries?: number;
};

/**
 * The cache key of one text for one model: a SHA-256 of both, so changing the
 * model never serves vectors of another.
 */
export function embeddingCacheKey(modelId: string, text: string): string {
  return createHash('sha256').update(modelId).update('\0').update(text).digest('base64url');
}

/**
 * An in-memory embedding cache, optionally persisted to a file. A torn last
 * line (a crash mid-append) is ignored on load, not fatal.
 *
 * @example
 * ```ts
 * const cache = createEmbeddingCache({ path: '.cache/embeddings.jsonl' });
 * const index = createToolIndex({ embeddingModel: openai.embedding('text-embedding-3-small'), cache });
 * ```
 */
export function createEmbeddingCache({
  path,
  maxEntries = 100_000,
}: EmbeddingCacheOptions = {}): EmbeddingCache {
  const memory = new Map<string, Float32Array>();
  let loaded: Promise<void> | undefined;
  let writes: Promise<void> = Promise.resolve();

  const remember = (key: string, vector: Float32Array): void => {
    memory.delete(key);
    memory.set(key, vector);
    if (memory.size > maxEntries) memory.delete(memory.keys().next().value as string);
  };

  const load = (): Promise<void> => {
    if (path === undefined) return Promise.resolve();
    loaded ??= readFile(/* turbopackIgnore: true */ path, 'utf8').then(
      text => {
        for (const line of text.split('\n')) {
          const entry = parseLine(line);
          if (entry !== undefined) remember(entry.key, entry.vector);
        }
      },
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      },
    );
    return loaded;
  };

  return {
    async get(key) {
      await load();
      return memory.get(key);
    },
    async set(entries) {
      await load();
      for (const { key, vector } of entries) remember(key, vector);
      if (path === undefined || entries.length === 0) return;
      const lines = entries.map(({ key, vector }) => formatLine(key, vector)).join('');
      // Serialise appends so concurrent batches never interleave within a line.
      writes = writes.then(async () => {
        await mkdir(dirname(path), { recursive: true });
        await appendFile(path, lines);
      });
      await writes;
    },
  };
}

function formatLine(key: string, vector: Float32Array): string {
  const bytes = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
  return `${JSON.stringify({ k: key, v: bytes.toString('base64') })}\n`;
}

function parseLine(line: string): { key: string; vector: Float32Array } | undefined {
  if (line.trim() === '') return undefined;
  try {
    const { k, v } = JSON.parse(line) as { k?: unknown; v?: unknown };
    if (typeof k !== 'string' || typeof v !== 'string') return undefined;
    const bytes = Buffer.from(v, 'base64');
    if (bytes.byteLength % 4 !== 0) return undefined;
    const vector = new Float32Array(bytes.byteLength / 4);
    new Uint8Array(vector.buffer).set(bytes);
    return { key: k, vector };
  } catch {
    return undefined; // a torn line from an interrupted append
  }
}
