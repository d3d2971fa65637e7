import type { EvalQuery } from './catalog-file.ts';
import type { ToolIndex } from '../tool-index.ts';

/**
 * Teaches an index from labelled requests: every (query, gold tool) pair whose
 * tool is indexed is learned, as if the tool had served the request. For
 * warming an index from past traffic, and for `ai-toolbelt eval --learn-from`.
 * Returns the number of pairs learned.
 *
 * @example
 * ```ts
 * const index = createToolIndex({ learning: true });
 * await index.upsert(tools);
 * await learnFromQueries({ index, queries: await readEvalQueries('train.jsonl') });
 * ```
 */
export async function learnFromQueries({
  index,
  queries,
  abortSignal,
}: {
  /** An index created with `learning`. */
  index: ToolIndex;
  /** Requests with the tools that served them. */
  queries: readonly EvalQuery[];
  /** Stops between pairs. */
  abortSignal?: AbortSignal;
}): Promise<number> {
  let learned = 0;
  for (const { query, gold } of queries) {
    for (const tool of gold) {
      abortSignal?.throwIfAborted();
      if (!index.has(tool)) continue;
      if (await index.learn({ query, tool, ...(abortSignal ? { abortSignal } : {}) })) learned++;
    }
  }
  return learned;
}
