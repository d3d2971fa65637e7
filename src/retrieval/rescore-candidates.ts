import type { RetrievalChannels } from './retrieval-channels.ts';

/**
 * Replaces approximate vectors (from a catalog snapshot) among the dense candidates of a search
 * with the exact ones, so the ranking is the one the model's own vectors give: first among the
 * `2 x pool` best of each query, then until the best `pool` hold none. The exact vectors come
 * through the embedder (its store, else the model) and then stay in the index. When they cannot
 * be had, the approximate ones rank and a later search tries again; an abort still throws.
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
  for (let round = 0; round < 3; round++) {
    const depth = round === 0 ? 2 * pool : pool;
    const slots = channels.approximateCandidates({ vectors, depth, accept });
    if (slots.length === 0) return;
    const texts = slots.map(slot => textOf(slot) as string);
    let exact: Float32Array[];
    try {
      exact = await embedder.embed(texts, abortSignal ? { abortSignal } : {});
    } catch (error) {
      if (abortSignal?.aborted) throw error;
      return;
    }
    slots.forEach((slot, i) => {
      // The catalog may have changed while the vectors were read.
      if (textOf(slot) !== texts[i]) return;
      if (channels.setExact(slot, exact[i] as Float32Array)) onExact(slot);
    });
  }
}
