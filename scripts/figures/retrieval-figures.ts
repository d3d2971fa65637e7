// Figures of bench:retrieval, bench:learning, bench:quality's warm starts and bench:cold-start.
import { measuredOn, ms, msOrS, num, ratio, table } from './format.ts';
import type { Results, Row } from './results.ts';
import type { Renderers } from './update-docs.ts';

const n = (row: Row, field: string): number => {
  const value = row[field];
  if (typeof value !== 'number') throw new Error(`${field} is ${JSON.stringify(value)}`);
  return value;
};
const recall = (row: Row, field: string, k: number): number =>
  (row[field] as Record<string, number>)[`R@${k}`]!;

function retrievalTable(results: Results): string {
  const rows = results.file('retrieval').rows;
  const optional = (value: unknown, render: (x: number) => string) =>
    typeof value === 'number' ? render(value) : '–';
  return [
    table(
      [
        'tools',
        'p50 ms',
        'p99 ms',
        'seed (Python) ms',
        'naive JS ms',
        'plain scan ms',
        'vs seed',
        'bytes / tool',
        'int8 rows: p50 ms',
        'int8 rows: resident bytes / tool',
      ],
      rows.map(row => [
        num(n(row, 'tools')),
        num(n(row, 'p50Ms'), n(row, 'p50Ms') < 1 ? 2 : 1),
        num(n(row, 'p99Ms'), n(row, 'p99Ms') < 1 ? 2 : 1),
        optional(row.seedMs, x => num(x)),
        num(n(row, 'naiveMs'), n(row, 'naiveMs') < 100 ? 1 : 0),
        num(n(row, 'scanMs'), n(row, 'scanMs') < 100 ? 1 : 0),
        optional(row.seedSpeedup, x => ratio(x, 0)),
        num(n(row, 'bytesPerTool')),
        optional(row.int8P50Ms, x => num(x, x < 1 ? 2 : 1)),
        optional(row.int8ResidentBytesPerTool, x => num(x)),
      ]),
    ),
    '',
    `Index memory is ${ratio(Math.max(...rows.map(row => n(row, 'memoryVsRawVectors'))))} the raw float32 vector bytes. The int8 columns hold the same vectors as a warm start holds a catalog snapshot's: int8 codes with a scale per vector, scanned by the same kernel. ${measuredOn(results.file('retrieval').machine, 'npm run bench:retrieval')}`,
  ].join('\n');
}

function lexicalTable(results: Results): string {
  const file = results.file('lexical');
  return [
    table(
      [
        'tools',
        'index ms',
        'heap bytes / tool',
        'heap bytes / (term, tool)',
        'search p50 ms',
        'search p99 ms',
      ],
      file.rows.map(row => [
        num(n(row, 'tools')),
        num(n(row, 'indexMs'), n(row, 'indexMs') < 100 ? 1 : 0),
        num(n(row, 'bytesPerTool')),
        num(n(row, 'bytesPerPair')),
        num(n(row, 'searchP50Ms'), n(row, 'searchP50Ms') < 1 ? 2 : 1),
        num(
          n(row, 'searchP99Ms'),
          n(row, 'searchP99Ms') < 1 ? 2 : n(row, 'searchP99Ms') < 100 ? 1 : 0,
        ),
      ]),
    ),
    '',
    `A tool holds ${num(n(file.rows[0]!, 'pairsPerTool'), 1)} distinct terms on average. ${measuredOn(file.machine, 'npm run bench:lexical')}`,
  ].join('\n');
}

function learningTable(results: Results): string {
  const rows = results.rows('learning').filter(row => row.retrieval !== undefined);
  return [
    table(
      [
        'set',
        'channel',
        'learned pairs',
        'R@1 without / with',
        'R@5 without / with',
        'R@10 without / with',
      ],
      rows.map(row => [
        String(row.set),
        String(row.retrieval),
        num(n(row, 'learned')),
        ...[1, 5, 10].map(
          k => `${num(recall(row, 'without', k), 1)} / ${num(recall(row, 'withLearning', k), 1)}`,
        ),
      ]),
    ),
    '',
    measuredOn(results.file('learning').machine, 'npm run bench:learning'),
  ].join('\n');
}

const figures = (row: Row): string[] => [
  ...[1, 5, 10].map(k => num(recall(row, 'recall', k), 1)),
  num(n(row, 'ndcg10'), 1),
];

function warmRecallTable(results: Results): string {
  const lines: string[][] = [];
  const names: Record<string, string> = {
    exact: 'vectors from the model (cold start)',
    snapshot:
      "int8 snapshot, a search's candidates replaced by the stored float32 before it answers (warm start, `rescore: 'before'`)",
    'snapshot-after':
      'int8 snapshot, every vector replaced by the stored float32 in the background (warm start, default)',
    int8: 'int8 snapshot alone, never replaced (for comparison)',
  };
  let model = '';
  for (const set of ['dev', 'dev-multi']) {
    // The table says the warm start ranks like the cold one; the bench checked it per set.
    for (const check of [
      'warm (snapshot) figures equal cold (exact) ones',
      'warm (rescored after ranking) figures equal cold (exact) ones',
      'warm lexical (analysis snapshot) figures equal cold ones',
    ]) {
      if (results.row('quality', { set, check }).ok !== true)
        throw new Error(`bench/results/quality.json: ${set}: ${check} is false`);
    }
    for (const vectors of ['exact', 'snapshot', 'snapshot-after', 'int8']) {
      const row = results.row('quality', { set, retrieval: 'hybrid', vectors });
      model = String(row.model);
      lines.push([set, names[vectors]!, ...figures(row)]);
    }
  }
  return [
    table(['set', 'hybrid, dense vectors', 'R@1', 'R@5', 'R@10', 'nDCG@10'], lines),
    '',
    `Dense vectors from the local model ${model}. ${measuredOn(results.file('quality').machine, 'npm run bench:quality')}`,
  ].join('\n');
}

function coldStartTable(results: Results): string {
  const row = (mode: string) => results.row('cold-start', { mode });
  const lexical = row('lexical');
  const cold = row('hybrid-cold');
  const label: Record<string, string> = {
    lexical: 'lexical (no model)',
    'lexical-app': 'lexical, importing the provider and the store as the app with embeddings does',
    'hybrid-cold': 'embeddings over HTTP (stand-in vectors), empty store',
    'hybrid-warm': 'embeddings over HTTP (stand-in vectors), store filled by an earlier process',
    'lexical-warm': 'lexical, given that store (the analysis snapshot)',
    'hybrid-local-cold': 'hybrid, local model (all-MiniLM-L6-v2 on the CPU), empty store (one run)',
    'hybrid-local-warm': 'hybrid, local model, store filled by an earlier process',
  };
  const { machine } = results.file('cold-start');
  return [
    table(
      [
        'mode',
        'first selection after',
        'vs lexical',
        'vs lexical, same imports',
        'vs embeddings over HTTP, empty store',
        'imports',
        'building the index',
        'first selection',
        'texts embedded (requests)',
        'store reads',
        'memory (RSS)',
      ],
      [
        'lexical',
        'lexical-app',
        'hybrid-cold',
        'hybrid-warm',
        'lexical-warm',
        'hybrid-local-cold',
        'hybrid-local-warm',
      ].map(mode => {
        const r = row(mode);
        const phases = r.phases as Record<string, number>;
        return [
          label[mode]!,
          msOrS(n(r, 'coldStartMs')),
          ratio(n(r, 'coldStartMs') / n(lexical, 'coldStartMs')),
          ratio(n(r, 'coldStartMs') / n(row('lexical-app'), 'coldStartMs')),
          ratio(n(r, 'coldStartMs') / n(cold, 'coldStartMs')),
          ms(phases.importMs!),
          msOrS(phases.indexMs!),
          ms(phases.selectMs!),
          `${num(n(r, 'embeddedTexts'))} (${num(n(r, 'embedCalls'))})`,
          mode === 'lexical' || mode === 'lexical-app'
            ? '–'
            : `${num(n(r, 'storeReads'))} (${ms(phases.storeReadMs!)})`,
          `${num(n(r, 'rssMiB'))} MiB`,
        ];
      }),
    ),
    '',
    `${num(n(lexical, 'tools'))} tools; medians of ${n(lexical, 'runs')} rounds, each a fresh process per case; the phases are medians too, so they need not add up. Warm and cold starts selected ${results.row('cold-start', { check: 'warm and cold select the same tools' }).ok === true ? 'the same tools' : 'different tools'}, with the local model too${results.row('cold-start', { check: 'warm and cold select the same tools with the local model' }).ok === true ? '' : ' (no: they differed)'}. The local model's empty-store start embeds every tool on the CPU, so it runs once, before the rounds; its warm start loads the model when the first selection embeds the query. ${measuredOn(machine, 'npm run bench:cold-start')}`,
  ].join('\n');
}

function coldStartAnswerTable(results: Results): string {
  const row = (mode: string) => results.row('cold-start', { mode });
  const label: Record<string, string> = {
    'lexical-app': 'lexical, importing the provider and the store as the app with embeddings does',
    'hybrid-cold': 'embeddings over HTTP (stand-in vectors), empty store',
    'hybrid-warm': 'embeddings over HTTP (stand-in vectors), store filled by an earlier process',
    'lexical-warm': 'lexical, given that store (the analysis snapshot)',
    'hybrid-local-cold': 'hybrid, local model, empty store (one run)',
    'hybrid-local-warm': 'hybrid, local model, store filled by an earlier process',
  };
  return [
    table(
      [
        'mode',
        'first answer after',
        'vs lexical, same imports',
        'vs embeddings over HTTP, empty store',
      ],
      [
        'lexical-app',
        'hybrid-cold',
        'hybrid-warm',
        'lexical-warm',
        'hybrid-local-cold',
        'hybrid-local-warm',
      ].map(mode => [
        label[mode]!,
        msOrS(n(row(mode), 'firstAnswerMs')),
        ratio(n(row(mode), 'answerVsLexicalApp')),
        ratio(n(row(mode), 'answerVsHybridCold')),
      ]),
    ),
    '',
    `The same processes, until the app's first model call with the selection has answered (the fake server's chat model, which answers at once: a warm start's call shares the process with the background read of its candidates' exact vectors, which a real model's seconds would hide). Same rounds and medians as above.`,
  ].join('\n');
}

function coldStartSummary(results: Results): string {
  const phase = (mode: string, name: string) =>
    (results.row('cold-start', { mode }).phases as Record<string, number>)[name]!;
  const warm = results.row('cold-start', { mode: 'hybrid-warm' });
  const app = results.row('cold-start', { mode: 'lexical-app' });
  const lexical = results.row('cold-start', { mode: 'lexical' });
  const lexicalWarm = results.row('cold-start', { mode: 'lexical-warm' });
  const both = (name: string) =>
    `${ms(phase('hybrid-warm', name))} against ${ms(phase('lexical-app', name))}`;
  return [
    `Here a warm start (embeddings over HTTP) took ${ratio(n(warm, 'vsLexical'))} the lexical start and ${ratio(n(warm, 'vsHybridCold'))} the start with an empty store. Importing`,
    `the provider and the store alone (a lexical start that imports them) took ${ms(n(app, 'coldStartMs') - n(lexical, 'coldStartMs'))} more than the lexical`,
    `start (its imports alone, ${ms(phase('lexical-app', 'importMs') - phase('lexical', 'importMs'))} more). Against that start, a warm start took ${ratio(n(warm, 'vsLexicalApp'))}:`,
    `building the index took ${both('indexMs')} (a warm start reads the catalog's analysis and`,
    `vector snapshots where the lexical app tokenises the catalog), and the first selection`,
    `${both('selectMs')}: mostly the app's first embedding request (Node loads its HTTP client then;`,
    `a cold start pays for it while embedding the catalog), and checking the lexical candidates' snapshot terms`,
    `against their text. Given the store, a lexical app reads the analysis snapshot too: it started in`,
    `${ms(n(lexicalWarm, 'coldStartMs'))} (${ratio(n(lexicalWarm, 'vsLexical'))} the lexical start), and a warm start with embeddings took ${ratio(n(warm, 'coldStartMs') / n(lexicalWarm, 'coldStartMs'))} that.`,
    `A lexical app pays for its HTTP client at its first model call: until the first answer, a warm`,
    `start took ${ratio(n(warm, 'answerVsLexicalApp'))} the lexical app's and ${ratio(n(warm, 'answerVsHybridCold'))} the empty store's.`,
  ].join('\n');
}

export const retrievalFigures: Renderers = {
  blocks: {
    'retrieval-table': retrievalTable,
    'lexical-table': lexicalTable,
    'learning-table': learningTable,
    'warm-recall-table': warmRecallTable,
    'cold-start-table': coldStartTable,
    'cold-start-answer-table': coldStartAnswerTable,
    'cold-start-summary': coldStartSummary,
  },
  values: {},
};
