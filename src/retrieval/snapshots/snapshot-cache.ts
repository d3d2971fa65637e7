import type { EmbeddingCacheEvent } from '../store/embedding-cache-event.ts';
import {
  type SnapshotChunk,
  decodeSnapshotChunk,
  encodeSnapshot,
  snapshotCatalog,
  snapshotDirections,
} from './catalog-snapshot.ts';
import { type Guarded, keepNewest, readChunks, writeChunks } from './snapshot-store.ts';

/** Fewer vectors than this are read key by key: a snapshot pays off for catalogs, not for a tool. */
export const MIN_SNAPSHOT_TEXTS = 64;

/** Reads and writes whole-catalog snapshots (see `catalog-snapshot.ts`) in a store. */
export type SnapshotCache = {
  /**
   * The vectors of `keys` (same order) from their catalog's snapshot, approximate and as int8
   * directions (see `snapshotDirections`); undefined on a miss.
   */
  read(request: {
    modelId: string;
    keys: readonly string[];
    dimensions?: number | undefined;
    abortSignal?: AbortSignal | undefined;
  }): Promise<Int8Array[] | undefined>;
  /** Writes the snapshot of `keys` (their vectors in the same order) and drops the oldest beyond the limit. */
  write(request: {
    modelId: string;
    keys: readonly string[];
    vectors: readonly Float32Array[];
  }): Promise<void>;
  /** Reports the snapshot of `keys` as an `invalid-entry` (one per chunk) and removes it. */
  drop(request: { modelId: string; keys: readonly string[]; reason: string }): Promise<void>;
};

/**
 * Snapshots under `<prefix>:snapshot:<model>:<catalog hash>:<chunk>`, and per model a list of the
 * newest `maxSnapshots` (`<prefix>:snapshots:<model>`): writing a snapshot removes those that
 * fell off it, so a catalog that changes with every deploy does not pile up snapshots.
 *
 * @example
 * ```ts
 * const snapshots = snapshotCache({ guarded, storeKey, modelKey, maxSnapshots: 4, report });
 * const vectors = await snapshots.read({
 *   modelId,
 *   keys: tools.map(tool => toolEmbeddingKey(toolHash(tool))),
 * });
 * ```
 */
export function snapshotCache({
  guarded,
  storeKey,
  modelKey,
  maxSnapshots,
  report,
}: {
  /** Store operations with the cache's timeout, back-off and error events. */
  guarded: Guarded;
  /** The full store key of a key below the cache's prefix. */
  storeKey: (key: string) => string;
  /** A model id made key-safe. */
  modelKey: (modelId: string) => string;
  /** Snapshots kept per model. */
  maxSnapshots: number;
  /** The cache's event listener. */
  report: (event: EmbeddingCacheEvent) => void;
}): SnapshotCache {
  const chunkKey = (modelId: string, hash: string, chunk: number) =>
    storeKey(`snapshot:${modelKey(modelId)}:${hash}:${chunk}`);
  const listKey = (modelId: string) => storeKey(`snapshots:${modelKey(modelId)}`);

  return {
    async read({ modelId, keys: rows, dimensions, abortSignal }) {
      if (maxSnapshots < 1 || rows.length < MIN_SNAPSHOT_TEXTS) return undefined;
      const started = performance.now();
      const catalog = snapshotCatalog(rows);
      const keys = Array.from({ length: catalog.chunks }, (_, c) =>
        chunkKey(modelId, catalog.hash, c),
      );
      const values = await readChunks({ guarded, keys, abortSignal });
      if (values === undefined) return undefined;
      const total = catalog.keys.length;
      const decoded = [];
      let invalid = 0;
      for (const [chunk, value] of values.entries()) {
        if (value === undefined) break;
        const result = decodeSnapshotChunk(value, {
          modelId,
          hash: catalog.hash,
          chunk,
          total,
          dimensions,
        });
        if ('invalid' in result) {
          invalid++;
          report({ type: 'invalid-entry', key: keys[chunk]!, reason: result.invalid });
          break;
        }
        if (decoded.length > 0 && result.dimensions !== decoded[0]!.dimensions) {
          invalid++;
          report({ type: 'invalid-entry', key: keys[chunk]!, reason: 'dimensions differ' });
          break;
        }
        decoded.push(result);
      }
      const hit = decoded.length === catalog.chunks;
      report({
        type: 'read',
        source: 'store',
        texts: total,
        hits: hit ? total : 0,
        invalid,
        ms: performance.now() - started,
        snapshot: true,
      });
      if (!hit) return undefined;
      const vectors = snapshotDirections(decoded);
      const byKey = new Map(catalog.keys.map((key, i) => [key, vectors[i]!]));
      return rows.map(key => byKey.get(key)!);
    },

    async write({ modelId, keys: rows, vectors }) {
      if (maxSnapshots < 1 || rows.length < MIN_SNAPSHOT_TEXTS) return;
      const catalog = snapshotCatalog(rows);
      const byKey = new Map(rows.map((key, i) => [key, vectors[i]!]));
      const keys = Array.from({ length: catalog.chunks }, (_, c) =>
        chunkKey(modelId, catalog.hash, c),
      );
      const request = {
        modelId,
        hash: catalog.hash,
        vectors: catalog.keys.map(key => byKey.get(key)!),
      };
      const written = await writeChunks({
        guarded,
        keys,
        encode: bytes =>
          bytes
            ? encodeSnapshot({ ...request, bytes: true })
            : (encodeSnapshot(request) satisfies SnapshotChunk[]),
      });
      if (!written) return; // the store failed (reported): no list to update
      await keepNewest({
        guarded,
        listKey: listKey(modelId),
        hash: catalog.hash,
        chunks: catalog.chunks,
        maxSnapshots,
        chunkKey: (hash, chunk) => chunkKey(modelId, hash, chunk),
      });
    },

    async drop({ modelId, keys: rows, reason }) {
      const catalog = snapshotCatalog(rows);
      const keys = Array.from({ length: catalog.chunks }, (_, c) =>
        chunkKey(modelId, catalog.hash, c),
      );
      for (const key of keys) report({ type: 'invalid-entry', key, reason });
      // Its entry in the model's list stays: removing keys that are already gone is harmless.
      await guarded('write', b => b.remove(keys));
    },
  };
}
