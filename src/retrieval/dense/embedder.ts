// dense/: the dense channel: the embedding model behind its cache (`Embedder`) and the vector index
// searched with it.
import { embedMany, type EmbeddingModel } from 'ai';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import { type EmbeddingCache, createEmbeddingCache } from '../embedding-cache.ts';
import { inputPrefixes } from './input-prefixes.ts';

/** Options of {@link Embedder.embed}. */
export type EmbedOptions = {
  abortSignal?: AbortSignal;
  /**
   * `tool` (default): catalog texts, remembered in the shared store. `query`:
   * user text, remembered in memory only, so it never reaches the store.
   */
  purpose?: 'tool' | 'query';
  /** Embed again even when a vector is cached (the stored ones turned out stale). */
  refresh?: boolean;
};

/**
 * Vectors of a catalog's texts; `approximate` when they came from a snapshot: int8 values that
 * point each vector's way (for cosine similarity), not its length. `reject` forgets that snapshot
 * (the index calls it when an exact vector points elsewhere than the snapshot's).
 *
 * @example
 * ```ts
 * const { vectors, approximate, reject } = await embedder.embedCatalog!({ keys, texts: () => texts });
 * if (approximate && !sameDirection(vectors[0], exact)) await reject?.('does not match');
 * ```
 */
export type CatalogVectors = {
  vectors: ArrayLike<number>[];
  approximate: boolean;
  /** Reports the snapshot the vectors came from as invalid and removes it from the store. */
  reject?: (reason: string) => Promise<void>;
};

/**
 * A catalog for {@link Embedder.embedCatalog}: `keys` name its vectors in the snapshot, one per
 * text and changing with it (a tool's content hash and the text format), and `texts` gives the
 * texts, called only when they must be embedded: a warm start never builds them.
 */
export type CatalogTexts = { keys: readonly string[]; texts: () => readonly string[] };

/** Turns texts into vectors, remembering what it has embedded. */
export interface Embedder {
  /** Identifies the model (and its query and document prefixes); part of every cache key. */
  readonly id: string;
  embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]>;
  /**
   * A catalog's vectors for an upsert: from the cache's whole-catalog snapshot when it has one
   * (one store round trip, approximate: `embed` gives the exact ones later), else as `embed`
   * gives them, then kept as a snapshot for the next start. `refresh` embeds again. Texts alone
   * are their own keys.
   */
  embedCatalog?(
    catalog: readonly string[] | CatalogTexts,
    options?: { abortSignal?: AbortSignal; refresh?: boolean },
  ): Promise<CatalogVectors>;
}

/** Options of {@link createEmbedder}. */
export type CreateEmbedderOptions = {
  /** Any AI SDK embedding model, e.g. `openai.embedding('text-embedding-3-small')`. */
  model: EmbeddingModel;
  /** Where vectors are remembered; an in-memory cache by default. */
  cache?: EmbeddingCache;
  /** Concurrent embedding requests when a batch is split by `maxEmbeddingsPerCall`. */
  maxParallelCalls?: number;
  /** Retries per embedding request (the AI SDK's own retry with backoff). */
  maxRetries?: number;
};

/**
 * Wraps an AI SDK embedding model: identical texts are embedded once, cached
 * texts not at all, and the rest go through `embedMany`, which splits them by
 * the model's `maxEmbeddingsPerCall`. The model's own output fixes the vector
 * length: a cached vector of another length is embedded again and replaced. A
 * model that puts prefixes before queries and documents (see `inputPrefixes`)
 * is told which one each call embeds, and its vectors are cached under the
 * prefixed texts, so a query never gets a document's vector of the same text.
 *
 * @example
 * ```ts
 * const embedder = createEmbedder({ model: openai.embedding('text-embedding-3-small') });
 * const [vector] = await embedder.embed(['weather in Paris']);
 * ```
 */
export function createEmbedder({
  model,
  cache = createEmbeddingCache(),
  maxParallelCalls = 4,
  maxRetries = 2,
}: CreateEmbedderOptions): Embedder {
  const prefixes = inputPrefixes(model);
  // The prefixes are part of what a vector means: snapshots and learned query vectors made with
  // other prefixes belong to another model.
  const id = prefixes ? `${modelId(model)}#${prefixes.fingerprint}` : modelId(model);
  // The vector length: the model's own output decides; stored vectors only suggest one.
  let dimensions: number | undefined;

  // One request per group, `maxParallelCalls` at a time: groups respect both the model's
  // own input limit and a token budget (OpenAI rejects requests over 300,000 tokens).
  const embedFresh = async (
    values: string[],
    abortSignal: AbortSignal | undefined,
    purpose: 'tool' | 'query',
  ) => {
    const perCall = typeof model === 'string' ? undefined : await model.maxEmbeddingsPerCall;
    const groups = groupTexts(values, perCall ?? Number.POSITIVE_INFINITY);
    const vectors: Float32Array[][] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < groups.length) {
        const at = next++;
        const { embeddings } = await embedMany({
          model,
          values: groups[at] as string[],
          ...(abortSignal ? { abortSignal } : {}),
          maxParallelCalls,
          maxRetries,
          ...(prefixes && typeof model !== 'string'
            ? {
                providerOptions: {
                  [model.provider]: { inputType: purpose === 'query' ? 'query' : 'document' },
                },
              }
            : {}),
        });
        vectors[at] = embeddings.map(embedding => Float32Array.from(embedding));
      }
    };
    await Promise.all(Array.from({ length: Math.min(maxParallelCalls, groups.length) }, worker));
    return vectors.flat();
  };

  const embedder: Embedder = {
    id,
    async embedCatalog(catalog, { abortSignal, refresh = false } = {}) {
      const { keys, texts } = Array.isArray(catalog)
        ? { keys: catalog as readonly string[], texts: () => catalog as readonly string[] }
        : (catalog as CatalogTexts);
      const snapshot = refresh
        ? undefined
        : await cache.readSnapshot?.({
            modelId: id,
            keys,
            ...(dimensions !== undefined ? { dimensions } : {}),
            ...(abortSignal ? { abortSignal } : {}),
          });
      if (usableSnapshot(snapshot, keys.length)) {
        dimensions ??= snapshot[0]?.length;
        const drop = cache.dropSnapshot?.bind(cache);
        return {
          vectors: snapshot,
          approximate: true,
          ...(drop ? { reject: (reason: string) => drop({ modelId: id, keys, reason }) } : {}),
        };
      }
      const all = texts();
      if (all.length !== keys.length)
        throw new InvalidArgumentError({
          argument: 'catalog.texts',
          value: all.length,
          message: `expected one text per key (${keys.length})`,
        });
      const vectors = await embedder.embed(all, {
        refresh,
        ...(abortSignal ? { abortSignal } : {}),
      });
      await cache.writeSnapshot?.({ modelId: id, keys, vectors });
      return { vectors, approximate: false };
    },
    async embed(texts, { abortSignal, purpose = 'tool', refresh = false } = {}) {
      abortSignal?.throwIfAborted();
      texts.forEach((text, i) => {
        if (typeof text !== 'string') {
          throw new InvalidArgumentError({
            argument: `texts[${i}]`,
            value: text,
            message: 'expected a string',
          });
        }
      });
      const persist = purpose === 'tool';
      const unique = [...new Set(texts)];
      // The key of a text is the text the model embeds: with its prefix.
      const prefix =
        prefixes === undefined ? '' : purpose === 'query' ? prefixes.query : prefixes.document;
      const vectors = refresh
        ? unique.map(() => undefined)
        : await cache.read({
            modelId: id,
            texts: prefix === '' ? unique : unique.map(text => prefix + text),
            persist,
            ...(dimensions !== undefined ? { dimensions } : {}),
            ...(abortSignal ? { abortSignal } : {}),
          });
      let missing = unique.filter((_, i) => vectors[i] === undefined);
      const fresh = new Map<string, Float32Array>();
      if (missing.length > 0) {
        (await embedFresh(missing, abortSignal, purpose)).forEach((v, i) =>
          fresh.set(missing[i]!, v),
        );
        dimensions = fresh.values().next().value?.length ?? dimensions;
        // Cached vectors of another length than the model's own are stale: embed them too.
        missing = unique.filter((_, i) => {
          const v = vectors[i];
          return v !== undefined && v.length !== dimensions;
        });
        if (missing.length > 0)
          (await embedFresh(missing, abortSignal, purpose)).forEach((v, i) =>
            fresh.set(missing[i]!, v),
          );
        await cache.write({
          modelId: id,
          entries: [...fresh].map(([text, vector]) => ({ text: prefix + text, vector })),
          persist,
        });
      } else if (dimensions === undefined) {
        dimensions = vectors.find(v => v !== undefined)?.length;
      }
      const byText = new Map<string, Float32Array>();
      unique.forEach((text, i) =>
        byText.set(text, fresh.get(text) ?? (vectors[i] as Float32Array)),
      );
      return texts.map(text => byText.get(text) as Float32Array);
    },
  };
  return embedder;
}

// A custom cache's snapshot is used only when it has a vector per text, all of one length: the
// index would otherwise put `undefined` or mixed lengths in its slots.
function usableSnapshot(
  snapshot: ArrayLike<number>[] | undefined,
  texts: number,
): snapshot is ArrayLike<number>[] {
  if (!Array.isArray(snapshot) || snapshot.length !== texts || texts === 0) return false;
  const length = (snapshot[0] as ArrayLike<number> | undefined)?.length;
  return (
    typeof length === 'number' &&
    length > 0 &&
    snapshot.every(vector => vector != null && vector.length === length)
  );
}

// About 200,000 tokens of English (3+ characters a token): well inside OpenAI's
// 300,000-token limit per embeddings request.
const MAX_CHARS_PER_CALL = 600_000;

function groupTexts(values: readonly string[], maxTexts: number): string[][] {
  const groups: string[][] = [];
  let group: string[] = [];
  let chars = 0;
  for (const value of values) {
    if (
      group.length > 0 &&
      (group.length >= maxTexts || chars + value.length > MAX_CHARS_PER_CALL)
    ) {
      groups.push(group);
      group = [];
      chars = 0;
    }
    group.push(value);
    chars += value.length;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

function modelId(model: EmbeddingModel): string {
  return typeof model === 'string' ? model : `${model.provider}:${model.modelId}`;
}
