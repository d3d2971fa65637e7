import type { LexicalIndex } from '../lexical/lexical-index.ts';
import { sameToolText, termCountsOf } from '../lexical/term-counts.ts';
import type { ToolFields } from '../tool-fields.ts';
import type { SnapshotSource } from './load-changed-tools.ts';
import { SnapshotSlots } from './snapshot-slots.ts';

/**
 * The tools whose lexical terms came from an analysis snapshot and were not checked yet. A
 * check tokenises a tool again and compares; one that differs proves the snapshot wrong (a bug,
 * or a forged store value): it is dropped from the store and every tool it gave is tokenised
 * again, so no ranking rests on terms a tool's text does not have. Each tool is checked once.
 *
 * @example
 * ```ts
 * const stored = new StoredAnalysis({ lexical, fieldsOf, onReplaced });
 * stored.add(slot, source);
 * const changed = stored.verify(rankedSlots);
 * ```
 */
export class StoredAnalysis extends SnapshotSlots {
  private readonly lexical: LexicalIndex;
  private readonly fieldsOf: (slot: number) => ToolFields;
  private readonly onReplaced: (slot: number) => void;

  constructor(options: {
    /** The index's lexical channel. */
    lexical: LexicalIndex;
    /** The fields of the tool in a slot. */
    fieldsOf: (slot: number) => ToolFields;
    /** A slot was indexed again from its text (its learned usage is to be put back). */
    onReplaced: (slot: number) => void;
  }) {
    super();
    this.lexical = options.lexical;
    this.fieldsOf = options.fieldsOf;
    this.onReplaced = options.onReplaced;
  }

  /**
   * Checks the unchecked slots among `slots`; true when the index changed (a snapshot proved
   * wrong and its tools were tokenised again).
   */
  verify(slots: Iterable<number>): boolean {
    const lexical = this.lexical;
    const wrong = new Set<SnapshotSource>();
    for (const slot of slots) {
      const source = this.sources.get(slot);
      if (source === undefined) continue;
      this.sources.delete(slot);
      const fresh = termCountsOf(lexical.analyze(this.fieldsOf(slot)));
      const held = lexical.termCounts(slot);
      if (held !== undefined && sameToolText(held, fresh)) continue;
      lexical.set(slot, fresh);
      this.onReplaced(slot);
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
        lexical.set(slot, lexical.analyze(this.fieldsOf(slot)));
        this.onReplaced(slot);
      }
    }
    return wrong.size > 0;
  }
}
