import type { StoreError } from '../../errors/store-error.ts';

/** What the embedding cache reports: nothing here is a failure of the caller's request. */
export type EmbeddingCacheEvent =
  /** The store or file was read for a batch of texts. */
  | {
      type: 'read';
      source: 'file' | 'store';
      /** Texts asked for. */
      texts: number;
      /** Usable vectors found. */
      hits: number;
      /** Entries found but rejected (see `invalid-entry`). */
      invalid: number;
      ms: number;
      /** A whole-catalog snapshot was read (one round trip): `hits` is all `texts` or none. */
      snapshot?: boolean;
      /** The snapshot was of the catalog's lexical analysis (its tokenised text), not its vectors. */
      analysis?: boolean;
    }
  /** A stored vector was not used (another model, shape or corrupt); it is embedded again and replaced. */
  | { type: 'invalid-entry'; key: string; reason: string }
  /**
   * The store failed or timed out; the texts are embedded again. The store is
   * left alone for `retryAfterMs`, then tried again.
   */
  | { type: 'store-error'; source: 'file' | 'store'; error: StoreError };
