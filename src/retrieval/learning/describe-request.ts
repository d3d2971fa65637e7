import { normalized } from '../dense/vector-math.ts';
import { tokenize } from '../lexical/tokenize.ts';
import { distinctNeeds } from '../ranking/multi-need.ts';
import type { RetrievalChannels } from '../ranking/retrieval-channels.ts';
import { MAX_TERMS_PER_REQUEST } from './usage-record.ts';

// Candidates a need's ranking is searched to when attributing a learned request.
const NEED_POOL = 50;

/** What is learned from one request: its served part, as terms and (with a model) a vector. */
export type LearnedRequest = {
  text: string;
  terms: string[];
  vector?: { modelId: string; values: Float32Array };
};

/**
 * What to learn from a request a tool served: the part it served (in a multi-need request, the
 * need the tool ranks best for, else the whole request) as index terms and, with a model, its
 * normalised embedding. Undefined when there is nothing to learn.
 *
 * @example
 * ```ts
 * const request = await describeRequest({ channels, query: 'weather in Paris and mail Bob', slot });
 * // { text: 'weather in Paris', terms: ['weather', 'pari'], vector: { modelId, values } }
 * ```
 */
export async function describeRequest({
  channels,
  query,
  slot,
  abortSignal,
}: {
  /** The index's channels. */
  channels: RetrievalChannels;
  /** The user's request. */
  query: string;
  /** The slot of the tool that served it. */
  slot: number;
  abortSignal?: AbortSignal | undefined;
}): Promise<LearnedRequest | undefined> {
  const text = await servedNeed(channels, query, slot, abortSignal);
  const terms = [...new Set(tokenize(text))].slice(0, MAX_TERMS_PER_REQUEST);
  const embedder = channels.embedder;
  if (terms.length === 0 && embedder === undefined) return undefined;
  const [vector] = await channels.embedQueries([text], abortSignal);
  return {
    text,
    terms,
    ...(vector && embedder ? { vector: { modelId: embedder.id, values: normalized(vector) } } : {}),
  };
}

async function servedNeed(
  channels: RetrievalChannels,
  query: string,
  slot: number,
  abortSignal: AbortSignal | undefined,
): Promise<string> {
  const needs = distinctNeeds(query, channels.lexical);
  if (needs.length < 2) return query;
  const vectors = await channels.embedQueries(needs, abortSignal);
  let best = query;
  let bestRank = Number.POSITIVE_INFINITY;
  needs.forEach((need, i) => {
    const rank = channels
      .rank(need, vectors[i], NEED_POOL, undefined)
      .findIndex(hit => hit.slot === slot);
    if (rank >= 0 && rank < bestRank) [best, bestRank] = [need, rank];
  });
  return best;
}
