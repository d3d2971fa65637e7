import type { Embedder } from '../dense/embedder.ts';
import { cosine } from '../dense/vector-math.ts';
import type { RetrievalChannels } from '../ranking/retrieval-channels.ts';
import type { SnapshotSource } from './load-changed-tools.ts';
import { SnapshotSlots } from './snapshot-slots.ts';

// An int8 snapshot keeps a vector's direction to within a cosine of about 0.9999 for real
// embeddings; one below this was not made from the exact vector (forged, or another model's).
const MIN_SNAPSHOT_COSINE = 0.99;

/**
 * The description vectors that came from a catalog snapshot (int8, approximate) and the
 * snapshot each came from. `replace` reads exact vectors through the embedder (its store, else
 * the model) and puts them in place. An exact vector that points elsewhere than its approximate
 * one means the snapshot was not made from these vectors (forged, stale or corrupt in a way its
 * checks cannot see): the snapshot is reported and removed, and every other vector from it is
 * read exactly too.
 *
 * @example
 * ```ts
 * const approximate = new ApproximateVectors({ channels, embedder, textOf, onExact });
 * approximate.add(slot, source);
 * await approximate.replace(approximate.pending(256));
 * ```
 */
export class ApproximateVectors extends SnapshotSlots {
  private readonly channels: RetrievalChannels;
  private readonly embedder: Embedder;
  private readonly textOf: (slot: number) => string | undefined;
  private readonly onExact: (slot: number) => void;

  constructor(options: {
    /** The index's channels, which hold the vectors. */
    channels: RetrievalChannels;
    /** The dense channel's embedder. */
    embedder: Embedder;
    /** The embedding text of the tool in a slot, now (undefined once removed). */
    textOf: (slot: number) => string | undefined;
    /** Called for each slot whose exact vector is now in place (to mix learned usage back in). */
    onExact: (slot: number) => void;
  }) {
    super();
    this.channels = options.channels;
    this.embedder = options.embedder;
    this.textOf = options.textOf;
    this.onExact = options.onExact;
  }

  /**
   * Puts the exact vectors of those of `slots` still approximate in place: `replaced` when any
   * was, `failed` when they could not be read (the approximate ones stay; an abort throws).
   */
  async replace(
    slots: Iterable<number>,
    abortSignal?: AbortSignal,
  ): Promise<{ replaced: boolean; failed: boolean }> {
    const todo = [...slots].filter(slot => this.sources.has(slot));
    if (todo.length === 0) return { replaced: false, failed: false };
    const texts = todo.map(slot => this.textOf(slot) as string);
    let exact: Float32Array[];
    try {
      exact = await this.embedder.embed(texts, abortSignal ? { abortSignal } : {});
    } catch (error) {
      if (abortSignal?.aborted) throw error;
      return { replaced: false, failed: true };
    }
    let replaced = false;
    const wrong = new Set<SnapshotSource>();
    todo.forEach((slot, i) => {
      const source = this.sources.get(slot);
      const vector = exact[i] as Float32Array;
      const approximate = this.channels.descriptionOf(slot);
      // The catalog may have changed while the vectors were read (then `loaded` said where the
      // slot's new vector came from).
      if (source === undefined || this.textOf(slot) !== texts[i]) return;
      this.sources.delete(slot);
      if (approximate === undefined) return;
      if (vector.length !== approximate.length) return; // the model changed: a rebuild follows
      const matches = cosine(approximate, vector) >= MIN_SNAPSHOT_COSINE;
      this.channels.setDescription(slot, vector);
      this.onExact(slot);
      replaced = true;
      if (!matches && !source.rejected) wrong.add(source);
    });
    for (const source of wrong) {
      source.rejected = true;
      await source
        .reject?.('an approximate vector points elsewhere than its exact one')
        .catch(() => {});
      // None of its other vectors can be trusted: all of them are read exactly now.
      const rest = [...this.sources].flatMap(([slot, of]) => (of === source ? [slot] : []));
      if (rest.length > 0) await this.replace(rest, abortSignal);
    }
    return { replaced, failed: false };
  }
}
