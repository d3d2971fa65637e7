// What bench:quality measures of one index configuration on one dev set: Recall@1/5/10 and
// nDCG@10 in %, without learning (the whole set) and with it (2 folds by query id: learn one
// fold's (query, gold) pairs, evaluate the other, both ways).
import { createHash } from 'node:crypto';
import type { EvalQuery } from '../../src/retrieval/eval/catalog-file.ts';
import {
  type CreateToolIndexOptions,
  createToolIndex,
} from '../../src/retrieval/create-tool-index.ts';
import { evaluateRetrieval } from '../../src/retrieval/eval/evaluate-retrieval.ts';
import { learnFromQueries } from '../../src/retrieval/eval/learn-from-queries.ts';
import type { ToolIndex } from '../../src/retrieval/tool-index.ts';
import type { ToolDescriptor } from '../../src/retrieval/types.ts';

export const KS = [1, 5, 10] as const;

/** Figures in %: `recall['R@5']`, `ndcg10`. */
export type Figures = { recall: Record<string, number>; ndcg10: number };
/** A dev set. */
export type Catalog = { set: string; tools: ToolDescriptor[]; queries: EvalQuery[] };

const pct = (x: number): number => Math.round(x * 1000) / 10;
const fold = (id: string): 0 | 1 =>
  ((createHash('sha256').update(id).digest()[0] as number) & 1) as 0 | 1;

type Part = { report: Awaited<ReturnType<typeof evaluateRetrieval>>; weight: number };

/** One index's figures over `queries`, weighted by their count (for summing folds). */
export async function evaluate(
  index: ToolIndex,
  queries: readonly EvalQuery[],
  mode: 'multi' | 'single' = 'multi',
): Promise<Part> {
  const report = await evaluateRetrieval({ index, queries, ks: KS, mode });
  return { report, weight: queries.length };
}

/** Figures of several parts (folds), each weighed by its query count. */
export function asFigures(parts: readonly Part[]): Figures {
  const total = parts.reduce((sum, part) => sum + part.weight, 0);
  const mean = (value: (part: Part) => number) =>
    pct(parts.reduce((sum, part) => sum + value(part) * part.weight, 0) / total);
  return {
    recall: Object.fromEntries(
      KS.map(k => [`R@${k}`, mean(part => part.report.recall[String(k)]!)]),
    ),
    ndcg10: mean(part => part.report.ndcg10),
  };
}

/** Without learning (the whole set) and with it (two folds, each learned from the other). */
export async function withAndWithoutLearning(
  { tools, queries }: Catalog,
  options: CreateToolIndexOptions,
): Promise<{ without: Figures; learned: Figures; learnedPairs: number }> {
  const plain = createToolIndex(options);
  await plain.upsert(tools);
  const without = asFigures([await evaluate(plain, queries)]);
  const folds: [EvalQuery[], EvalQuery[]] = [[], []];
  for (const query of queries) folds[fold(query.id)].push(query);
  const parts = [];
  let learnedPairs = 0;
  for (const test of [0, 1] as const) {
    const index = createToolIndex({ ...options, learning: true });
    await index.upsert(tools);
    learnedPairs += await learnFromQueries({ index, queries: folds[1 - test]! });
    parts.push(await evaluate(index, folds[test]));
  }
  return { without, learned: asFigures(parts), learnedPairs };
}

/** The mean of each figure over several sets (a macro mean: every set counts once). */
export function macroMean(figures: readonly Figures[]): Figures {
  const mean = (value: (f: Figures) => number) =>
    Math.round((figures.reduce((sum, f) => sum + value(f), 0) / figures.length) * 10) / 10;
  return {
    recall: Object.fromEntries(KS.map(k => [`R@${k}`, mean(f => f.recall[`R@${k}`]!)])),
    ndcg10: mean(f => f.ndcg10),
  };
}
