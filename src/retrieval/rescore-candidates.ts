import type { RetrievalChannels, SnapshotSource } from './retrieval-channels.ts';

/**
 * Replaces approximate vectors (from a catalog snapshot) among the dense candidates of a search
 * with the exact ones, so the ranking is the one the model's own vectors give: first among the
 * `2 x pool` best of each query, then round after round until the best `pool` hold none (each
 * round replaces at least one, so there are at most as many rounds as approximate vectors). The
 * exact vectors come through the embedder (its store, else the model) and then stay in the index.
 * An exact vector that points elsewhere than its approximate one means the snapshot was not made
 * from these vectors (forged, stale or corrupt in a way its checks cannot see): the snapshot is
 * reported and removed (`CatalogVectors.reject`) and every other vector from it is read exactly
 * too. When exact vectors cannot be had, the approximate ones rank and a later search tries
 * again; an abort still throws.
 *
 * @example
 * ```ts
 * await rescoreCandidates({ channels, vectors, pool: 50, accept, textOf, onExact, abortSignal });
 * ```
 */
export async function rescoreCandidates({
  channels,
  vectors,
  pool,
  accept,
  textOf,
  onExact,
  abortSignal,
}: {
  /** The index's channels. */
  channels: RetrievalChannels;
  /** The search's query vectors. */
  vectors: readonly Float32Array[];
  /** Candidates each channel contributes. */
  pool: number;
  /** Slot filter of the search. */
  accept: ((slot: number) => boolean) | undefined;
  /** The embedding text of the tool in a slot, now (undefined once removed). */
  textOf: (slot: number) => string | undefined;
  /** Called for each slot whose exact vector is now in place (to mix learned usage back in). */
  onExact: (slot: number) => void;
  abortSignal: AbortSignal | undefined;
}): Promise<void> {
  const embedder = channels.embedder;
  if (embedder === undefined || vectors.length === 0) return;

  // Whether any slot got its exact vector.
  const replace = async (slots: number[]): Promise<boolean> => {
    const texts = slots.map(slot => textOf(slot) as string);
    let exact: Float32Array[];
    try {
      exact = await embedder.embed(texts, abortSignal ? { abortSignal } : {});
    } catch (error) {
      if (abortSignal?.aborted) throw error;
      return false;
    }
    let replaced = false;
    const wrong = new Set<SnapshotSource>();
    slots.forEach((slot, i) => {
      // The catalog may have changed while the vectors were read.
      if (textOf(slot) !== texts[i]) return;
      const source = channels.sourceOf(slot);
      const outcome = channels.setExact(slot, exact[i] as Float32Array);
      if (outcome === 'kept') return;
      replaced = true;
      onExact(slot);
      if (outcome === 'mismatch' && source !== undefined && !source.rejected) wrong.add(source);
    });
    for (const source of wrong) {
      source.rejected = true;
      await source
        .reject?.('an approximate vector points elsewhere than its exact one')
        .catch(() => {});
      // None of its other vectors can be trusted: all of them are read exactly now.
      const rest = channels.approximateSlotsOf(source);
      if (rest.length > 0) await replace(rest);
    }
    return replaced;
  };

  const rounds = channels.approximateCount;
  for (let round = 0; round <= rounds; round++) {
    const depth = round === 0 ? 2 * pool : pool;
    const slots = channels.approximateCandidates({ vectors, depth, accept });
    if (slots.length === 0 || !(await replace(slots))) return;
  }
}
