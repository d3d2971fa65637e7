import type { EmbeddingBacking } from '../store/embedding-backing.ts';

/** Store operations with the cache's timeout, back-off and error events (see `storeGuard`). */
export type Guarded = <T>(
  operation: 'read' | 'write',
  run: (backing: EmbeddingBacking) => Promise<T>,
  abortSignal?: AbortSignal,
) => Promise<T | undefined>;

const LIST_FORMAT = 'aitb-snaps1|';

/**
 * Reads a snapshot's chunks in one round trip: as bytes where the store keeps them (a quarter
 * less to move than base64, off the heap), else as text. Undefined when the store failed.
 *
 * @example
 * ```ts
 * const values = await readChunks({ guarded, keys, abortSignal });
 * ```
 */
export function readChunks({
  guarded,
  keys,
  abortSignal,
}: {
  /** The guarded store. */
  guarded: Guarded;
  /** The chunks' full store keys. */
  keys: readonly string[];
  abortSignal?: AbortSignal | undefined;
}): Promise<unknown[] | undefined> {
  return guarded(
    'read',
    async b => {
      const bytes = await b.bytes?.(keys[0]!);
      return bytes ? bytes.read(keys) : b.read(keys);
    },
    abortSignal,
  );
}

/**
 * Writes a snapshot's chunks, encoded as bytes where the store keeps them, else as text; true
 * once written, false when the store failed or `encode` gave nothing.
 */
export async function writeChunks({
  guarded,
  keys,
  encode,
}: {
  /** The guarded store. */
  guarded: Guarded;
  /** The chunks' full store keys. */
  keys: readonly string[];
  /** The chunks, as bytes or text. */
  encode: (bytes: boolean) => readonly (string | Uint8Array)[] | undefined;
}): Promise<boolean> {
  const written = await guarded('write', async b => {
    const bytes = await b.bytes?.(keys[0]!);
    const chunks = encode(bytes !== undefined);
    if (chunks === undefined) return false;
    if (bytes) {
      await bytes.write(chunks.map((value, c) => ({ key: keys[c]!, bytes: value as Uint8Array })));
    } else {
      await b.write(chunks.map((record, c) => ({ key: keys[c]!, record: record as string })));
    }
    return true;
  });
  return written === true;
}

/**
 * Puts a snapshot first in its list (`listKey`, newest first) and removes the chunks of those
 * that fell past `maxSnapshots`, so a catalog that changes with every deploy does not pile up
 * snapshots.
 */
export async function keepNewest({
  guarded,
  listKey,
  hash,
  chunks,
  maxSnapshots,
  chunkKey,
}: {
  /** The guarded store. */
  guarded: Guarded;
  /** The list's full store key. */
  listKey: string;
  /** The snapshot's catalog hash. */
  hash: string;
  /** Its chunk count. */
  chunks: number;
  /** Snapshots kept. */
  maxSnapshots: number;
  /** The full store key of chunk `chunk` of the snapshot of catalog `hash`. */
  chunkKey: (hash: string, chunk: number) => string;
}): Promise<void> {
  const [stored] = (await guarded('read', b => b.read([listKey]))) ?? [];
  const listed = parseList(stored).filter(entry => entry.h !== hash);
  const kept = [{ h: hash, n: chunks }, ...listed].slice(0, maxSnapshots);
  const dropped = listed.slice(maxSnapshots - 1);
  const list = `${LIST_FORMAT}${JSON.stringify(kept)}`;
  await guarded('write', b => b.write([{ key: listKey, record: list }]));
  const stale = dropped.flatMap(({ h, n }) => Array.from({ length: n }, (_, c) => chunkKey(h, c)));
  if (stale.length > 0) await guarded('write', b => b.remove(stale));
}

function parseList(value: unknown): { h: string; n: number }[] {
  if (typeof value !== 'string' || !value.startsWith(LIST_FORMAT)) return [];
  try {
    const parsed = JSON.parse(value.slice(LIST_FORMAT.length)) as unknown;
    if (!Array.isArray(parsed)) return [];
    // Only what this code writes: a hash (base64url) and a small chunk count.
    return parsed.filter(
      (entry): entry is { h: string; n: number } =>
        typeof entry?.h === 'string' &&
        /^[\w-]{43}$/.test(entry.h) &&
        Number.isInteger(entry.n) &&
        entry.n >= 1 &&
        entry.n <= 100_000,
    );
  } catch {
    return [];
  }
}
