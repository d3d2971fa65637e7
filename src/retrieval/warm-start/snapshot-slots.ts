import type { SnapshotSource } from './load-changed-tools.ts';

/**
 * The slots whose terms or vector came from a snapshot and are not checked yet, each with the
 * snapshot it came from: what `StoredAnalysis` and `ApproximateVectors` work through.
 *
 * @example
 * ```ts
 * class StoredAnalysis extends SnapshotSlots {}
 * stored.add(slot, source);
 * stored.pending(100); // up to 100 slots still to check
 * ```
 */
export class SnapshotSlots {
  protected readonly sources = new Map<number, SnapshotSource>();

  /** Slots still to check. */
  get size(): number {
    return this.sources.size;
  }

  /** What `slot` holds came from `source`. */
  add(slot: number, source: SnapshotSource): void {
    this.sources.set(slot, source);
  }

  /** The slot holds the tool's own now (indexed again, or removed). */
  forget(slot: number): void {
    this.sources.delete(slot);
  }

  /** Forgets every slot. */
  clear(): void {
    this.sources.clear();
  }

  /** Up to `count` slots still to check, those of `first` before the others. */
  pending(count: number, first: Iterable<number> = []): number[] {
    const slots = new Set<number>();
    for (const slot of first) {
      if (slots.size >= count) break;
      if (this.sources.has(slot)) slots.add(slot);
    }
    for (const slot of this.sources.keys()) {
      if (slots.size >= count) break;
      slots.add(slot);
    }
    return [...slots];
  }
}
