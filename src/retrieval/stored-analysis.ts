import type { LexicalIndex } from './lexical-index.ts';
import type { SnapshotSource } from './retrieval-channels.ts';
import { sameToolText, termCountsOf } from './term-counts.ts';
import type { ToolFields } from './tool-fields.ts';

/**
 * The tools whose lexical terms came from an analysis snapshot and were not checked yet. A search
 * checks those among its lexical candidates before it ranks: each is tokenised again (about 50
 * tools, a few milliseconds) and compared. One that differs proves the snapshot wrong (a bug, or
 * a forged store value): it is dropped from the store and every tool it gave is tokenised again,
 * so no ranking rests on terms a tool's text does not have.
 *
 * @example
 * ```ts
 * const stored = new StoredAnalysis(lexical);
 * stored.add(slot, source);
 * const changed = stored.verify({ queries: ['weather in Paris'], pool: 50, fieldsOf, onReplaced });
 * ```
 */
export class StoredAnalysis {
  private readonly sources = new Map<number, SnapshotSource>();
  private readonly lexical: LexicalIndex | undefined;

  constructor(lexical: LexicalIndex | undefined) {
    this.lexical = lexical;
  }

  /** Tools whose terms are unchecked. */
  get size(): number {
    return this.sources.size;
  }

  /** The terms indexed in `slot` came from `source`. */
  add(slot: number, source: SnapshotSource): void {
    this.sources.set(slot, source);
  }

  /** The slot's terms are the tool's own now (re-indexed, or removed). */
  forget(slot: number): void {
    this.sources.delete(slot);
  }

  /**
   * Checks the unchecked tools among each query's `pool` best lexical candidates; true when the
   * index changed (a snapshot proved wrong and its tools were tokenised again).
   */
  verify({
    queries,
    pool,
    accept,
    fieldsOf,
    onReplaced,
  }: {
    /** The request and its needs. */
    queries: readonly string[];
    /** Candidates per query. */
    pool: number;
    /** Slot filter. */
    accept?: ((slot: number) => boolean) | undefined;
    /** The fields of the tool in a slot. */
    fieldsOf: (slot: number) => ToolFields;
    /** A slot was indexed again from its text (its learned usage is to be put back). */
    onReplaced: (slot: number) => void;
  }): boolean {
    const lexical = this.lexical;
    if (this.sources.size === 0 || lexical === undefined) return false;
    const suspects = new Set<number>();
    for (const query of queries) {
      for (const { slot } of lexical.search(query, pool, accept))
        if (this.sources.has(slot)) suspects.add(slot);
    }
    const wrong = new Set<SnapshotSource>();
    for (const slot of suspects) {
      const source = this.sources.get(slot) as SnapshotSource;
      this.sources.delete(slot);
      const fresh = termCountsOf(lexical.analyze(fieldsOf(slot)));
      const held = lexical.termCounts(slot);
      if (held !== undefined && sameToolText(held, fresh)) continue;
      lexical.set(slot, fresh);
      onReplaced(slot);
      wrong.add(source);
    }
    for (const source of wrong) {
      if (!source.rejected) {
        source.rejected = true;
        void source.reject?.('terms that differ from the tool text').catch(() => {});
      }
      for (const [slot, of] of this.sources) {
        if (of !== source) continue;
        this.sources.delete(slot);
        lexical.set(slot, lexical.analyze(fieldsOf(slot)));
        onReplaced(slot);
      }
    }
    return wrong.size > 0;
  }
}
