// Figures of bench:embedding: the local embedding models on this machine's CPU.
import { measuredOn, mib, ms, num, ratio, table } from './format.ts';
import type { Results, Row } from './results.ts';
import type { Renderers } from './update-docs.ts';

const n = (row: Row, field: string): number => {
  const value = row[field];
  if (typeof value !== 'number') throw new Error(`${field} is ${JSON.stringify(value)}`);
  return value;
};

type Targets = {
  loadMs: number;
  queryP50Ms: number;
  searchP50Ms?: number;
  catalogS: number;
  rssGrowthMiB: number;
};

function embeddingTable(results: Results): string {
  const file = results.file('embedding');
  const rows = file.rows.filter(row => typeof row.model === 'string');
  if (rows.length === 0) throw new Error('bench/results/embedding.json has no model rows');
  const first = rows[0]!;
  const targets = first.targets as Targets;
  const tools = num(n(first, 'catalogTools'));
  // What each pass field checks, as the table's last column names a target that was missed.
  const checks: [field: string, label: string][] = [
    ['loadPass', 'load'],
    ['queryP50Pass', 'query p50'],
    ['searchP50Pass', 'search p50'],
    ['catalogPass', `${tools} tools`],
    ['rssGrowthPass', 'RSS growth'],
  ];
  return [
    table(
      [
        'model',
        'load',
        'query p50 / p95',
        'search p50 / p95',
        `${tools} tools`,
        'vs default (catalog / query)',
        'tools / s',
        'tokens / tool',
        'RSS growth',
        'event-loop delay p99 / max',
        'targets met',
      ],
      rows.map(row => {
        const missed = checks.filter(([field]) => row[field] !== true).map(([, label]) => label);
        return [
          `\`${String(row.model)}\``,
          ms(n(row, 'loadMs')),
          `${ms(n(row, 'queryP50Ms'))} / ${ms(n(row, 'queryP95Ms'))}`,
          `${ms(n(row, 'searchP50Ms'))} / ${ms(n(row, 'searchP95Ms'))}`,
          `${num(n(row, 'catalogS'), 1)} s`,
          typeof row.catalogVsDefault === 'number'
            ? `${ratio(n(row, 'catalogVsDefault'))} / ${ratio(n(row, 'queryP50VsDefault'))}`
            : '',
          num(n(row, 'toolsPerS')),
          num(n(row, 'catalogMeanTokens'), 1),
          `${mib(n(row, 'rssGrowthMiB'))} (${num(n(row, 'rssBeforeLoadMiB'))} → ${num(n(row, 'rssAfterLoadMiB'))} → ${num(n(row, 'rssAfterCatalogMiB'))})`,
          `${ms(n(row, 'eventLoopP99Ms'))} / ${ms(n(row, 'eventLoopMaxMs'))}`,
          missed.length === 0 ? 'all' : `all but ${missed.join(', ')}`,
        ];
      }),
    ),
    '',
    [
      `Each model in a fresh process, ${n(first, 'runs')} runs each, medians; ${n(first, 'threads')} ONNX Runtime threads.`,
      `Load: from \`localEmbeddingModel()\` to \`await model.load()\` (the worker thread, ONNX Runtime and the tokenizer).`,
      `Query: one search's query at a time through \`doEmbed\` (${num(n(first, 'queryMeanTokens'), 1)} tokens on average), 200 calls after 20 warm-up ones.`,
      `Search: \`index.search(query, { topK: 5 })\` on a hybrid index of those ${tools} tools (the query embedded, both channels ranked and fused), the azure-mcp requests (shorter than the query rows' texts), 200 after 20 warm-up ones.`,
      `Catalog: the BFCL dev tools repeated under new names to ${tools}, their index texts through \`embedMany\`; the main thread's event-loop delay meanwhile.`,
      `vs default: the catalog's time and the query p50 over the default model's in the same run (the median of the runs' ratios; on a shared machine they vary less than the times).`,
      `RSS before loading → after → after the catalog, MiB.`,
      `Targets: load ≤ ${num(targets.loadMs / 1000, 1)} s, query and search p50 ≤ ${ms(targets.queryP50Ms)}, ${tools} tools ≤ ${num(targets.catalogS)} s, RSS growth ≤ ${mib(targets.rssGrowthMiB)}.`,
      measuredOn(file.machine, 'npm run bench:embedding'),
    ].join(' '),
  ].join('\n');
}

export const embeddingFigures: Renderers = {
  blocks: { 'embedding-table': embeddingTable },
  values: {},
};
