import {
  ANALYSIS_CHUNK_ROWS,
  analyzerFingerprint,
  decodeAnalysisChunk,
  encodeAnalysis,
} from './analysis-snapshot.ts';
import { snapshotCatalog } from './catalog-snapshot.ts';
import type { EmbeddingCacheEvent } from '../store/embedding-cache-event.ts';
import { MIN_SNAPSHOT_TEXTS } from './snapshot-cache.ts';
import { type Guarded, keepNewest, readChunks, writeChunks } from './snapshot-store.ts';
import type { TermCounts } from '../lexical/term-counts.ts';

/**
 * A catalog's lexical analysis kept in a store (see `analysis-snapshot.ts`): what the index reads
 * instead of tokenising an unchanged catalog, by its tools' content hashes.
 */
export type AnalysisSnapshots = {
  /** The term counts of `keys` (same order) from their catalog's snapshot; undefined on a miss. */
  read(request: {
    keys: readonly string[];
    abortSignal?: AbortSignal | undefined;
  }): Promise<TermCounts[] | undefined>;
  /** Keeps the term counts of `keys` (each tool's own text, same order) for the next start. */
  write(request: { keys: readonly string[]; rows: readonly TermCounts[] }): Promise<void>;
  /** Reports the snapshot of `keys` as an `invalid-entry` (one per chunk) and removes it. */
  drop(request: { keys: readonly string[]; reason: string }): Promise<void>;
};

/**
 * Analysis snapshots under `<prefix>:analysis:<fingerprint>:<catalog hash>:<chunk>`, the newest
 * `maxSnapshots` listed under `<prefix>:analyses:<fingerprint>` (older ones are removed).
 *
 * @example
 * ```ts
 * const analyses = analysisSnapshots({ guarded, storeKey, maxSnapshots: 4, report });
 * const rows = await analyses.read({ keys: tools.map(toolHash) });
 * ```
 */
export function analysisSnapshots({
  guarded,
  storeKey,
  maxSnapshots,
  report,
}: {
  /** Store operations with the cache's timeout, back-off and error events. */
  guarded: Guarded;
  /** The full store key of a key below the cache's prefix. */
  storeKey: (key: string) => string;
  /** Snapshots kept. */
  maxSnapshots: number;
  /** The cache's event listener. */
  report: (event: EmbeddingCacheEvent) => void;
}): AnalysisSnapshots {
  const chunkKey = (hash: string, chunk: number) =>
    storeKey(`analysis:${analyzerFingerprint()}:${hash}:${chunk}`);
  const chunkKeys = (rows: readonly string[]) => {
    const catalog = snapshotCatalog(rows);
    const chunks = Math.ceil(catalog.keys.length / ANALYSIS_CHUNK_ROWS);
    return {
      catalog,
      chunks,
      keys: Array.from({ length: chunks }, (_, c) => chunkKey(catalog.hash, c)),
    };
  };

  return {
    async read({ keys: rows, abortSignal }) {
      if (maxSnapshots < 1 || rows.length < MIN_SNAPSHOT_TEXTS) return undefined;
      const started = performance.now();
      const { catalog, keys } = chunkKeys(rows);
      const values = await readChunks({ guarded, keys, abortSignal });
      if (values === undefined) return undefined;
      const total = catalog.keys.length;
      const decoded: TermCounts[] = [];
      let invalid = 0;
      for (const [chunk, value] of values.entries()) {
        if (value === undefined) break;
        const result = decodeAnalysisChunk(value, { hash: catalog.hash, chunk, total });
        if ('invalid' in result) {
          invalid++;
          report({ type: 'invalid-entry', key: keys[chunk]!, reason: result.invalid });
          break;
        }
        decoded.push(...result.rows);
      }
      const hit = decoded.length === total;
      report({
        ...{ type: 'read', source: 'store', texts: total, hits: hit ? total : 0, invalid },
        ...{ ms: performance.now() - started, snapshot: true, analysis: true },
      });
      if (!hit) return undefined;
      const byKey = new Map(catalog.keys.map((key, i) => [key, decoded[i]!]));
      return rows.map(key => byKey.get(key)!);
    },

    async write({ keys: rows, rows: counts }) {
      if (maxSnapshots < 1 || rows.length < MIN_SNAPSHOT_TEXTS) return;
      const { catalog, chunks, keys } = chunkKeys(rows);
      const byKey = new Map(rows.map((key, i) => [key, counts[i]!]));
      const ordered = catalog.keys.map(key => byKey.get(key)!);
      const written = await writeChunks({
        guarded,
        keys,
        encode: bytes => encodeAnalysis({ hash: catalog.hash, rows: ordered, bytes }),
      });
      if (!written) return;
      await keepNewest({
        guarded,
        listKey: storeKey(`analyses:${analyzerFingerprint()}`),
        hash: catalog.hash,
        chunks,
        maxSnapshots,
        chunkKey,
      });
    },

    async drop({ keys: rows, reason }) {
      const { keys } = chunkKeys(rows);
      for (const key of keys) report({ type: 'invalid-entry', key, reason });
      await guarded('write', b => b.remove(keys));
    },
  };
}
