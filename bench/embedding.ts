// The local embedding models (ai-toolbelt/local-embedding) on this machine's CPU, each installed
// one in a fresh process per run (bench/embedding-case.ts), so one model's memory figures are not
// another's: load time, one short query (p50 / p95 of 200 after 20 warm-up calls), a 3,000-tool
// catalog through `embedMany` (seconds, tools/s, mean tokens per text, the main thread's
// event-loop delay meanwhile), and resident memory before loading, after, and after the catalog.
// Each model runs RUNS times, the models in turn; figures are medians. Each row says whether the
// model meets the targets, and its catalog time and query p50 as ratios to the default
// model's in the same run (the median of the runs' ratios): on a shared machine the ratios vary
// less than the times.
// Usage: npm run bench:embedding (every installed model), or with other settings
//   node --expose-gc bench/embedding.ts [--models a,b] [--runs 2] [--threads N] && npm run figures
// (writes bench/results/embedding.json; models come from `node src/cli.ts fetch-model NAME`)
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { DEFAULT_LOCAL_MODEL, LOCAL_MODELS } from '../src/local-embedding/local-models.ts';
import { defaultModelsDir } from '../src/local-embedding/models-dir.ts';
import { benchResults } from './bench-results.ts';

// The targets for a local model on a developer's machine.
const TARGETS = {
  loadMs: 1_000,
  queryP50Ms: 10,
  searchP50Ms: 10,
  catalogS: 30,
  rssGrowthMiB: 250,
};

const { values } = parseArgs({
  options: {
    models: { type: 'string' },
    runs: { type: 'string', default: '2' },
    threads: { type: 'string' },
  },
});
const runs = Number(values.runs);
const models =
  values.models?.split(',') ??
  LOCAL_MODELS.map(spec => spec.name).filter(name => existsSync(join(defaultModelsDir(), name)));
if (models.length === 0)
  throw new Error(
    `no local model installed in ${defaultModelsDir()}: run node src/cli.ts fetch-model NAME`,
  );
// The model's own default when not given: the cores, at most 4.
const threads = values.threads
  ? Number(values.threads)
  : Math.max(1, Math.min(4, availableParallelism()));
const results = benchResults({
  name: 'embedding',
  command: 'npm run bench:embedding',
  notes: [
    `each model in a fresh process per run (${runs} runs, models in turn); figures are medians`,
    `${threads} ONNX Runtime threads; queries one at a time through doEmbed; the catalog through embedMany (maxParallelCalls 1)`,
    'RSS after a full collection; growth is from before loading to after the catalog',
    'event-loop delay: monitorEventLoopDelay (5 ms resolution) on the main thread while the catalog is embedded',
  ],
});

type CaseReport = {
  model: string;
  dimensions: number;
  loadMs: number;
  queryP50Ms: number;
  queryP95Ms: number;
  queryMeanTokens: number;
  searchP50Ms: number;
  searchP95Ms: number;
  catalogTools: number;
  catalogS: number;
  toolsPerS: number;
  catalogMeanTokens: number;
  eventLoopP99Ms: number;
  eventLoopMaxMs: number;
  rssBeforeLoadMiB: number;
  rssAfterLoadMiB: number;
  rssAfterCatalogMiB: number;
};

const run = promisify(execFile);
async function measure(model: string): Promise<CaseReport> {
  const { stdout } = await run(
    process.execPath,
    ['--expose-gc', join(import.meta.dirname, 'embedding-case.ts')],
    {
      env: { ...process.env, MODEL: model, THREADS: String(threads) },
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as CaseReport;
}

const reports = new Map<string, CaseReport[]>(models.map(model => [model, []]));
for (let i = 0; i < runs; i++) {
  for (const model of models) reports.get(model)!.push(await measure(model));
}

// The middle value; with an even count, the mean of the two middle ones.
const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return Number.isInteger(mid) ? (sorted[mid - 1]! + sorted[mid]!) / 2 : sorted[Math.floor(mid)]!;
};
const round = (x: number, digits = 1): number => Math.round(x * 10 ** digits) / 10 ** digits;
const baseline = reports.get(DEFAULT_LOCAL_MODEL);
for (const [model, runsOf] of reports) {
  const of = (field: keyof CaseReport) => median(runsOf.map(r => r[field] as number));
  // The median of each run's ratio to the default model measured just before or after it.
  const vsDefault = (field: 'catalogS' | 'queryP50Ms') =>
    baseline && round(median(runsOf.map((r, i) => r[field] / baseline[i]![field])), 2);
  const rssGrowthMiB = median(runsOf.map(r => r.rssAfterCatalogMiB - r.rssBeforeLoadMiB));
  const row = {
    model,
    dimensions: runsOf[0]!.dimensions,
    threads,
    loadMs: round(of('loadMs'), 0),
    queryP50Ms: round(of('queryP50Ms'), 2),
    queryP95Ms: round(of('queryP95Ms'), 2),
    queryMeanTokens: round(of('queryMeanTokens')),
    searchP50Ms: round(of('searchP50Ms'), 2),
    searchP95Ms: round(of('searchP95Ms'), 2),
    catalogTools: runsOf[0]!.catalogTools,
    catalogS: round(of('catalogS'), 2),
    toolsPerS: round(of('toolsPerS'), 0),
    catalogMeanTokens: round(of('catalogMeanTokens')),
    eventLoopP99Ms: round(of('eventLoopP99Ms')),
    eventLoopMaxMs: round(of('eventLoopMaxMs')),
    rssBeforeLoadMiB: round(of('rssBeforeLoadMiB')),
    rssAfterLoadMiB: round(of('rssAfterLoadMiB')),
    rssAfterCatalogMiB: round(of('rssAfterCatalogMiB')),
    rssGrowthMiB: round(rssGrowthMiB),
    ...(baseline
      ? { catalogVsDefault: vsDefault('catalogS'), queryP50VsDefault: vsDefault('queryP50Ms') }
      : {}),
  };
  const pass = {
    loadPass: row.loadMs <= TARGETS.loadMs,
    queryP50Pass: row.queryP50Ms <= TARGETS.queryP50Ms,
    searchP50Pass: row.searchP50Ms <= TARGETS.searchP50Ms,
    catalogPass: row.catalogS <= TARGETS.catalogS,
    rssGrowthPass: row.rssGrowthMiB <= TARGETS.rssGrowthMiB,
  };
  results.row({
    ...row,
    targets: TARGETS,
    ...pass,
    allPass: Object.values(pass).every(Boolean),
    // Each run's headline figures, to see how far apart the runs were.
    perRun: runsOf.map(r => ({
      loadMs: round(r.loadMs, 0),
      queryP50Ms: round(r.queryP50Ms, 2),
      catalogS: round(r.catalogS, 2),
      rssGrowthMiB: round(r.rssAfterCatalogMiB - r.rssBeforeLoadMiB),
    })),
    runs: runsOf.length,
  });
}
await results.save();
