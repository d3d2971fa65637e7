// warm-start/: an index filled from stored snapshots: loading them, then checking and replacing
// what came from them (in the background, or a search's own candidates), and vectors rebuilt
// when the model's length changed.
import type { ChannelCandidates, RetrievalChannels } from '../ranking/retrieval-channels.ts';
import type { ToolFields } from '../tool-fields.ts';
import { abortable } from '../../util/abortable.ts';
import { nextTurn } from '../../util/next-turn.ts';
import { ApproximateVectors } from './approximate-vectors.ts';
import type { SnapshotSource } from './load-changed-tools.ts';
import { StoredAnalysis } from './stored-analysis.ts';

// Per turn of the event loop in the background: tools tokenised again (a few milliseconds),
// and exact vectors read (one store request).
const ANALYSIS_CHUNK = 100;
const VECTOR_CHUNK = 256;

/** One indexed tool as a rebuild embeds it again. */
export type IndexedTool = { slot: number; key: string; text: string };

/**
 * What a warm start leaves to do once an index was filled from snapshots, in one place: the
 * tools whose terms came from an analysis snapshot are checked (tokenised again), and the
 * approximate (int8) vectors from a vector snapshot replaced by exact ones. A search ranks
 * through `rank`: the unchecked among the candidates it ranked are checked before its answer is
 * trusted, and with `rescore: 'before'` its approximate ones replaced first. All the rest runs
 * in the background after the first search, a chunk per turn of the event loop, and ends: each
 * tool is checked and each vector read once (a failed read stops the background until the next
 * search). When the model's vectors turn out to be of another length than the stored ones,
 * `rebuildVectors` embeds the catalog again, outside any search.
 *
 * @example
 * ```ts
 * const warm = new WarmStart({ channels, rescore: 'after', fieldsOf, textOf, catalog, onReplaced, changed });
 * warm.loaded(slot, { terms: analysisSource, vector: vectorSource });
 * const { merged } = await warm.rank({ vectors, rank: v => channels.rankNeeds({ ...search, vectors: v }) });
 * await warm.settled();
 * ```
 */
export class WarmStart {
  private readonly channels: RetrievalChannels;
  private readonly rescore: 'after' | 'before';
  private readonly analysis: StoredAnalysis | undefined;
  private readonly approximate: ApproximateVectors | undefined;
  private readonly catalog: () => IndexedTool[];
  private readonly onReplaced: (slot: number) => void;
  private readonly onChanged: () => void;
  // Counts what changed the index here, so a search knows whether it ranked on what is there.
  private changes = 0;
  // Dense candidates of searches, read before the rest.
  private readonly wanted = new Set<number>();
  private background: Promise<void> | undefined;
  private rebuilding: Promise<void> | undefined;

  constructor(options: {
    /** The index's channels. */
    channels: RetrievalChannels;
    /** When a search's approximate candidates are replaced: before its answer, or after. */
    rescore: 'after' | 'before';
    /** The fields of the tool in a slot. */
    fieldsOf: (slot: number) => ToolFields;
    /** The embedding text of the tool in a slot, now (undefined once removed). */
    textOf: (slot: number) => string | undefined;
    /** Every indexed tool, for a rebuild. */
    catalog: () => IndexedTool[];
    /** A slot's terms or vector were replaced (its learned usage is to be put back). */
    onReplaced: (slot: number) => void;
    /** The index changed (its version moves). */
    changed: () => void;
  }) {
    const { channels } = options;
    this.channels = channels;
    this.rescore = options.rescore;
    this.catalog = options.catalog;
    this.onReplaced = options.onReplaced;
    this.onChanged = options.changed;
    if (channels.lexical) {
      this.analysis = new StoredAnalysis({
        lexical: channels.lexical,
        fieldsOf: options.fieldsOf,
        onReplaced: options.onReplaced,
      });
    }
    if (channels.embedder) {
      this.approximate = new ApproximateVectors({
        channels,
        embedder: channels.embedder,
        textOf: options.textOf,
        onExact: options.onReplaced,
      });
    }
  }

  /** Where what `slot` now holds came from: snapshots, or (none given) the tool's own text. */
  loaded(slot: number, { terms, vector }: { terms?: SnapshotSource; vector?: SnapshotSource }) {
    if (terms) this.analysis?.add(slot, terms);
    else this.analysis?.forget(slot);
    if (vector) this.approximate?.add(slot, vector);
    else this.approximate?.forget(slot);
  }

  /** The slot is gone. */
  forget(slot: number): void {
    this.analysis?.forget(slot);
    this.approximate?.forget(slot);
    this.wanted.delete(slot);
  }

  /**
   * One search's ranking, trusted: with query vectors of another length than the indexed ones
   * (see `rebuildVectors`) a hybrid index ranks without them and a dense one waits for the
   * rebuild; then what came from snapshots among the candidates is checked, and the ranking done
   * again if that changed the index (at most once per checked tool or replaced vector, so it
   * ends). Starts the background work.
   */
  async rank<T extends { candidates: ChannelCandidates }>({
    vectors,
    rank,
    denseOnly,
    abortSignal,
  }: {
    /** The query vectors (empty without a model). */
    vectors: Float32Array[];
    /** Ranks with the vectors given. */
    rank: (vectors: Float32Array[]) => T;
    /** Whether the index has no lexical channel to rank with while vectors are rebuilt. */
    denseOnly: boolean;
    abortSignal?: AbortSignal | undefined;
  }): Promise<T> {
    let usable = vectors;
    if (vectors.length > 0 && this.differsFrom(vectors[0]!)) {
      const rebuilt = this.rebuildVectors();
      if (denseOnly) await abortable(rebuilt, abortSignal);
      else {
        rebuilt.catch(() => {}); // a later search tries again
        usable = [];
      }
    }
    let ranked = rank(usable);
    while (await this.checkRanking(ranked.candidates, abortSignal)) ranked = rank(usable);
    return ranked;
  }

  /**
   * Checks what a search ranked with: the unchecked terms among its lexical candidates and, with
   * `rescore: 'before'`, the approximate vectors among its dense ones. True when the index
   * changed under the ranking.
   */
  private async checkRanking(
    candidates: ChannelCandidates,
    abortSignal?: AbortSignal,
  ): Promise<boolean> {
    const before = this.changes;
    if (this.analysis?.verify(candidates.lexical)) this.changed();
    const approximate = this.approximate;
    if (approximate && approximate.size > 0) {
      if (this.rescore === 'before') {
        // While this waits, the background may replace vectors too: any change ranks again.
        if ((await approximate.replace(candidates.dense, abortSignal)).replaced) this.changed();
      } else {
        for (const slot of candidates.dense) this.wanted.add(slot);
      }
    }
    this.startBackground();
    return this.changes !== before;
  }

  /**
   * Resolves once the background work has ended: every tool checked and every vector exact (and
   * a rebuild done), or a read failed (the next search starts it again). Never rejects.
   */
  async settled(): Promise<void> {
    while (this.background || this.rebuilding) {
      await this.rebuilding?.catch(() => {});
      await this.background;
    }
  }

  /** Whether `vector` (the model's own) has another length than the indexed vectors. */
  differsFrom(vector: ArrayLike<number>): boolean {
    const dimensions = this.channels.dimensions;
    return dimensions !== undefined && dimensions !== vector.length;
  }

  /**
   * Embeds every indexed tool again, once however many callers ask (the stored vectors are of
   * another length than the model's now: its settings changed under the same id). It is not
   * tied to any caller's abort signal: a search that aborts leaves it running for the others.
   */
  rebuildVectors(): Promise<void> {
    const embedder = this.channels.embedder;
    if (embedder === undefined) return Promise.resolve();
    this.rebuilding ??= (async () => {
      const tools = this.catalog();
      const texts = tools.map(({ text }) => text);
      // Through embedCatalog, so the stale snapshot is replaced too.
      const fresh = embedder.embedCatalog
        ? (
            await embedder.embedCatalog(
              { keys: tools.map(({ key }) => key), texts: () => texts },
              { refresh: true },
            )
          ).vectors
        : await embedder.embed(texts, { refresh: true });
      this.channels.replaceVectors(tools.map(({ slot }, i) => ({ slot, vector: fresh[i]! })));
      this.approximate?.clear();
      this.wanted.clear();
      for (const { slot } of tools) this.onReplaced(slot);
      this.changed();
    })().finally(() => (this.rebuilding = undefined));
    return this.rebuilding;
  }

  private changed(): void {
    this.changes++;
    this.onChanged();
  }

  private startBackground(): void {
    if (this.background || !this.hasWork()) return;
    this.background = this.work()
      .catch(() => {}) // a failed read is dropped: the next search starts again
      .finally(() => (this.background = undefined));
  }

  private hasWork(): boolean {
    return (this.analysis?.size ?? 0) > 0 || (this.approximate?.size ?? 0) > 0;
  }

  // One chunk per turn, from the event loop: the search that started it has answered, and its
  // caller gone on (to its model call) before the first.
  private async work(): Promise<void> {
    for (;;) {
      await nextTurn();
      const approximate = this.approximate;
      const analysis = this.analysis;
      if (approximate && approximate.size > 0 && this.wanted.size > 0) {
        const slots = approximate.pending(VECTOR_CHUNK, this.wanted);
        for (const slot of slots) this.wanted.delete(slot);
        if (!(await this.replaceVectors(approximate, slots))) return;
      } else if (analysis && analysis.size > 0) {
        if (analysis.verify(analysis.pending(ANALYSIS_CHUNK))) this.changed();
      } else if (approximate && approximate.size > 0) {
        if (!(await this.replaceVectors(approximate, approximate.pending(VECTOR_CHUNK)))) return;
      } else {
        this.wanted.clear();
        return;
      }
    }
  }

  // False when the read failed.
  private async replaceVectors(approximate: ApproximateVectors, slots: number[]) {
    const { replaced, failed } = await approximate.replace(slots);
    if (replaced) this.changed();
    return !failed;
  }
}
