import { LRUCache } from 'lru-cache';
import type { LedSearch, ToolIndex } from '../../retrieval/tool-index.ts';
import type { QueryMode, ToolDescriptor } from '../../retrieval/types.ts';
import { noteSearch } from '../../telemetry/selection-telemetry.ts';

/** The tools a call offers, as the selector needs them. */
export type OfferedTool = { name: string; description?: string; inputSchema?: unknown };

/** The names a call offers, as a set. */
export type OfferedSet = {
  all: boolean;
  size: number;
  has(name: string): boolean;
  names?: Set<string>;
};

/**
 * The selector's view of its index: what a call offers, tools the index lacks
 * indexed on the fly (once, however many calls offer them at the same time),
 * and searches remembered per (query, catalog) in a bounded LRU, so the steps
 * of one turn cost one retrieval.
 */
export class OfferedTools {
  readonly index: ToolIndex;
  private readonly mode: QueryMode;
  private readonly cache: LRUCache<string, Promise<LedSearch>>;
  private readonly pending = new Map<string, Promise<unknown>>();

  constructor({
    index,
    mode,
    cacheSize,
  }: {
    /** The index to search and fill. */
    index: ToolIndex;
    /** `multi` or `single`. */
    mode: QueryMode;
    /** Searches remembered. */
    cacheSize: number;
  }) {
    this.index = index;
    this.mode = mode;
    this.cache = new LRUCache({ max: Math.max(1, cacheSize) });
  }

  /**
   * The offered names as a set, indexing unknown tools first when retrieval
   * will run. When the call offers exactly the indexed catalog (the usual
   * case) the index itself is the set: no per-step copy of 10,000 names.
   */
  async offeredSet(
    tools: readonly OfferedTool[],
    retrieving: boolean,
    abortSignal: AbortSignal | undefined,
  ): Promise<OfferedSet> {
    if (retrieving) await this.ensureIndexed(tools, abortSignal);
    if (retrieving && tools.length === this.index.size) {
      return { all: true, size: tools.length, has: name => this.index.has(name) };
    }
    const names = new Set(tools.map(tool => tool.name));
    return { all: false, size: names.size, has: name => names.has(name), names };
  }

  /** A search among the offered tools, remembered per (index version, k, query, subset). */
  search(
    query: string,
    offered: OfferedSet,
    topK: number,
    abortSignal: AbortSignal | undefined,
  ): Promise<LedSearch> {
    // A subset of the catalog ranks differently, so its names are part of the key.
    const subset = offered.all ? '' : [...(offered.names as Set<string>)].join('\u0000');
    const key = `${this.index.version}\u0001${topK}\u0001${query}\u0001${subset}`;
    let hits = this.cache.get(key);
    if (hits === undefined) {
      noteSearch();
      const search = this.index.searchWithLeaders(query, {
        topK,
        mode: this.mode,
        ...(offered.all ? {} : { filter: (tool: ToolDescriptor) => offered.has(tool.name) }),
        ...(abortSignal ? { abortSignal } : {}),
      });
      hits = search;
      this.cache.set(key, search);
      // Never cache a failure (unless a newer search took the key meanwhile).
      search.catch(() => this.cache.peek(key) === search && this.cache.delete(key));
    }
    return hits;
  }

  // Tools the index lacks are indexed in one batch; concurrent calls offering
  // the same new tools wait for that batch instead of embedding them again.
  private async ensureIndexed(
    tools: readonly OfferedTool[],
    abortSignal: AbortSignal | undefined,
  ): Promise<void> {
    const missing = tools.filter(
      tool => !this.index.has(tool.name) && !this.pending.has(tool.name),
    );
    if (missing.length > 0) {
      const batch = this.index.upsert(
        missing.map(({ name, description, inputSchema }) => ({
          name,
          ...(description !== undefined ? { description } : {}),
          ...(inputSchema !== undefined ? { inputSchema } : {}),
        })),
        abortSignal ? { abortSignal } : {},
      );
      for (const tool of missing) this.pending.set(tool.name, batch);
      const done = () => missing.forEach(tool => this.pending.delete(tool.name));
      void batch.then(done, done);
    }
    const waits = new Set<Promise<unknown>>();
    for (const tool of tools) {
      const wait = this.pending.get(tool.name);
      if (wait !== undefined) waits.add(wait);
    }
    await Promise.all(waits);
  }
}
