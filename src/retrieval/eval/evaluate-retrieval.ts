// eval/: evaluation: catalog and query files, recall and nDCG of an index over a query set,
// learning from a labelled set.
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import type { EvalQuery } from './catalog-file.ts';
import type { QueryMode } from '../types.ts';
import type { ToolIndex } from '../tool-index.ts';

/** Retrieval quality over a query set; fractions 0..1. */
export type RetrievalReport = {
  tools: number;
  queries: number;
  recall: Record<string, number>;
  ndcg10: number;
  ms: number;
};

/** Options of {@link evaluateRetrieval}. */
export type EvaluateRetrievalOptions = {
  /** The index to query (already filled). */
  index: ToolIndex;
  /** Queries with their gold tools. */
  queries: readonly EvalQuery[];
  /** Cut-offs for Recall@k. */
  ks?: readonly number[];
  /** Query mode passed to every search. */
  mode?: QueryMode;
  abortSignal?: AbortSignal;
};

/**
 * Recall@k (|gold ∩ top-k| / |gold|, averaged) and nDCG@10 with binary gains,
 * as defined by the dev sets. Gold names missing from the catalog count as misses.
 *
 * @example
 * ```ts
 * const report = await evaluateRetrieval({ index, queries, ks: [1, 5, 10] });
 * console.log(report.recall['5']);
 * ```
 */
export async function evaluateRetrieval({
  index,
  queries,
  ks = [1, 5, 10],
  mode = 'multi',
  abortSignal,
}: EvaluateRetrievalOptions): Promise<RetrievalReport> {
  if (ks.length === 0 || !ks.every(k => Number.isInteger(k) && k > 0)) {
    throw new InvalidArgumentError({
      argument: 'ks',
      value: ks,
      message: 'expected positive integers',
    });
  }
  const started = performance.now();
  const recall = Object.fromEntries(ks.map(k => [String(k), 0]));
  let ndcg = 0;
  for (const { query, gold } of queries) {
    const golden = new Set(gold);
    // Recall@k is measured on a search for exactly k: the multi-need merge
    // depends on k, so a prefix of a longer list would misstate it.
    for (const k of ks) {
      const names = (
        await index.search(query, { topK: k, mode, ...(abortSignal ? { abortSignal } : {}) })
      ).map(h => h.name);
      recall[String(k)] =
        (recall[String(k)] as number) + names.filter(n => golden.has(n)).length / golden.size;
    }
    const top10 = (
      await index.search(query, { topK: 10, mode, ...(abortSignal ? { abortSignal } : {}) })
    ).map(h => h.name);
    let dcg = 0;
    top10.forEach((name, i) => {
      if (golden.has(name)) dcg += 1 / Math.log2(i + 2);
    });
    let ideal = 0;
    for (let i = 0; i < Math.min(golden.size, 10); i++) ideal += 1 / Math.log2(i + 2);
    ndcg += dcg / ideal;
  }
  const n = Math.max(1, queries.length);
  for (const k of Object.keys(recall)) recall[k] = (recall[k] as number) / n;
  return {
    tools: index.size,
    queries: queries.length,
    recall,
    ndcg10: ndcg / n,
    ms: Math.round(performance.now() - started),
  };
}
