// Writes the figures of README, docs/** and the examples' READMEs from bench/results/*.json:
//   node scripts/figures.ts          (rewrite the docs' figure blocks and values)
//   node scripts/figures.ts --check  (exit 1 when a doc differs from the results files)
// Every `npm run bench:*` runs it after writing its results file; `npm test` checks.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RENDERERS } from './figures/renderers.ts';
import { loadResults } from './figures/results.ts';
import { renderDocs } from './figures/update-docs.ts';

const root = join(import.meta.dirname, '..');
const check = process.argv.includes('--check');
const docs = await renderDocs({
  root,
  results: loadResults(join(root, 'bench', 'results')),
  renderers: RENDERERS,
  check,
});
const problems = docs.flatMap(doc => doc.problems);
if (!check) {
  for (const doc of docs) writeFileSync(join(root, doc.file), doc.text);
}
for (const problem of problems) console.error(problem);
if (problems.length > 0) process.exit(1);
