import type { EmbeddingModel } from 'ai';
import { sha256Base64Url } from '../../util/sha256.ts';

/** What an embedding model puts before a search query and before a document (a tool's text). */
export type InputPrefixes = {
  query: string;
  document: string;
  /** Short and key-safe, changing with either prefix: part of the embedder's id. */
  fingerprint: string;
};

/**
 * The prefixes an embedding model embeds queries and documents with, when it declares them as
 * string properties `queryPrefix` / `documentPrefix` (ai-toolbelt's local e5 and bge models do);
 * undefined for a model that embeds every text alike. Such a model is told which one it embeds
 * through `providerOptions[model.provider].inputType` (`'query'` or `'document'`) and puts the
 * prefix on itself; the embedder keys its cache on the text with the prefix, as embedded.
 *
 * @example
 * ```ts
 * inputPrefixes(localEmbeddingModel({ model: 'e5-small-v2-int8' }));
 * // { query: 'query: ', document: 'passage: ', fingerprint: '…' }
 * ```
 */
export function inputPrefixes(model: EmbeddingModel): InputPrefixes | undefined {
  if (typeof model === 'string') return undefined;
  const declared = model as { queryPrefix?: unknown; documentPrefix?: unknown };
  const query = typeof declared.queryPrefix === 'string' ? declared.queryPrefix : '';
  const document = typeof declared.documentPrefix === 'string' ? declared.documentPrefix : '';
  if (query === '' && document === '') return undefined;
  return {
    query,
    document,
    fingerprint: sha256Base64Url(`${query}\0${document}`).slice(0, 11),
  };
}
