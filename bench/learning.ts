// Retrieval with and without learning from use, on the dev sets, one JSON line each.
// 2-fold split by query id (the fold is a bit of the id's SHA-256, so file order does not
// matter): learn from one fold's (query, gold) pairs, evaluate on the other, and the
// reverse; figures are the mean over both folds, so no query is ever evaluated after
// being learned. The baseline evaluates the same folds on an index that learned nothing.
// The lexical channel; learning with the local embedding models (dense and hybrid) is measured
// by bench:quality, on the same folds.
// Also runs `ai-toolbelt eval --learn-from` on fold 0 of each set, to show its JSON.
// Usage: node bench/learning.ts [--sets DIR,DIR] (writes bench/results/learning.json)
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  type EvalQuery,
  readEvalQueries,
  readToolCatalog,
} from '../src/retrieval/eval/catalog-file.ts';
import { createToolIndex } from '../src/retrieval/create-tool-index.ts';
import { evaluateRetrieval } from '../src/retrieval/eval/evaluate-retrieval.ts';
import { learnFromQueries } from '../src/retrieval/eval/learn-from-queries.ts';
import { benchResults } from './bench-results.ts';

const root = join(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    sets: {
      type: 'string',
      default: [
        join(root, 'test/fixtures/eval/dev'),
        join(root, 'test/fixtures/eval/dev-multi'),
      ].join(','),
    },
  },
});
const KS = [1, 5, 10];
const results = benchResults({ name: 'learning', command: 'npm run bench:learning' });

const fold = (id: string): 0 | 1 =>
  ((createHash('sha256').update(id).digest()[0] as number) & 1) as 0 | 1;
const pct = (x: number): number => Math.round(x * 1000) / 10;

for (const dir of values.sets.split(',')) {
  const tools = await readToolCatalog(join(dir, 'tools.jsonl'));
  const queries = await readEvalQueries(join(dir, 'queries.jsonl'));
  const folds: [EvalQuery[], EvalQuery[]] = [[], []];
  for (const query of queries) folds[fold(query.id)].push(query);

  for (const retrieval of ['lexical'] as const) {
    const sums = { without: [0, 0, 0], with: [0, 0, 0] };
    let learned = 0;
    for (const test of [0, 1] as const) {
      const train = folds[1 - test] as EvalQuery[];
      for (const learn of [false, true]) {
        const index = createToolIndex({ learning: learn });
        await index.upsert(tools);
        if (learn) learned += await learnFromQueries({ index, queries: train });
        const report = await evaluateRetrieval({ index, queries: folds[test], ks: KS });
        // Weighted by fold size, so the figure is the recall over all queries.
        KS.forEach((k, i) => {
          sums[learn ? 'with' : 'without'][i]! +=
            (report.recall[String(k)] as number) * folds[test].length;
        });
      }
    }
    const recall = (key: 'with' | 'without') =>
      Object.fromEntries(
        KS.map((k, i) => [`R@${k}`, pct((sums[key][i] as number) / queries.length)]),
      );
    results.row({
      set: dir.split('/').at(-1),
      tools: tools.length,
      queries: queries.length,
      folds: folds.map(f => f.length),
      retrieval,
      learned,
      without: recall('without'),
      withLearning: recall('with'),
    });
  }

  // The CLI on fold 0 (learn from fold 1), to show `--learn-from` and its JSON.
  const scratch = mkdtempSync(join(tmpdir(), 'aitb-learning-'));
  try {
    const write = (name: string, rows: EvalQuery[]) => {
      const file = join(scratch, name);
      writeFileSync(file, rows.map(row => JSON.stringify(row)).join('\n'));
      return file;
    };
    const out = execFileSync(
      process.execPath,
      [
        join(root, 'src/cli.ts'),
        'eval',
        '--tools',
        join(dir, 'tools.jsonl'),
        '--queries',
        write('test.jsonl', folds[0]),
        '--learn-from',
        write('train.jsonl', folds[1]),
        '--embedder',
        'lexical',
        '--json',
      ],
      { encoding: 'utf8' },
    );
    results.row({
      set: dir.split('/').at(-1),
      cli: 'eval --learn-from (fold 0)',
      ...JSON.parse(out),
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
await results.save();
