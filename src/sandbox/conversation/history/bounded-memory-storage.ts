import type { SealedStoreStorage } from '../../../util/sealing/sealed-store.ts';

/**
 * The default store of conversations: this process's memory, holding at most `maxBytes` of
 * records (their JSON size); past it the least recently written records go, so users who open
 * conversation after conversation cannot grow the server without bound (a conversation whose
 * records went starts afresh, and says so). Expiry is kept inside each record by `SealedStore`.
 *
 * @example
 * ```ts
 * const sealed = new SealedStore({ store: boundedMemoryStorage({ maxBytes: 256 << 20 }), prefix, purpose });
 * ```
 */
export function boundedMemoryStorage({
  maxBytes,
}: {
  /** Bytes of records held in all. */
  maxBytes: number;
}): SealedStoreStorage {
  // Insertion order is write order: a rewrite deletes first, so the front is the oldest write.
  const items = new Map<string, { value: unknown; bytes: number }>();
  let total = 0;
  const remove = (key: string) => {
    const item = items.get(key);
    if (item === undefined) return;
    items.delete(key);
    total -= item.bytes;
  };
  return {
    getItem: async (key: string) => (items.get(key)?.value ?? null) as never,
    setItem: async (key: string, value: unknown) => {
      remove(key);
      const bytes = key.length + (JSON.stringify(value)?.length ?? 0);
      items.set(key, { value, bytes });
      total += bytes;
      for (const oldest of items.keys()) {
        if (total <= maxBytes || oldest === key) break;
        // The salt of hashed ids: without it no record would be found again.
        if (!oldest.endsWith(':id-salt')) remove(oldest);
      }
    },
    removeItem: async (key: string) => remove(key),
    getKeys: async (base?: string) =>
      [...items.keys()].filter(key => base === undefined || key.startsWith(base)),
  } as unknown as SealedStoreStorage;
}
