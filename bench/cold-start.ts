// Cold start of an app with 3,000 tools: time from process start (imports
// included) to the first selection returned by the middleware, one fresh
// process per case. Embeddings come over HTTP from the local fake
// OpenAI-compatible server (1,536 dimensions, like text-embedding-3-small),
// which counts them. Modes:
//   lexical      no embedding model
//   lexical-app  the same, importing (and creating, unused) the provider and the store as the
//                hybrid app does: what those cost a start, apart from the dense channel
//   hybrid-cold  embedding model, empty store: every tool is embedded
//   hybrid-warm  the store filled by the previous (cold) process
//   lexical-warm lexical-app with the store given to the index: it reads the catalog's analysis
//                snapshot (its tokenised text) as a warm hybrid start does
//   hybrid-local-warm  the local model (ai-toolbelt/local-embedding, all-MiniLM-L6-v2) in place of
//                the provider's, over a store the local model filled: hybrid-warm on this machine's
//                CPU (the model loads when the first selection embeds the query)
//   hybrid-local-cold  the local model with an empty store: every tool embedded on the CPU (tens of
//                seconds), so it runs once, before the rounds, and fills the store hybrid-local-warm
//                reads (its own Redis database, 15: the rounds use 0 to RUNS - 1)
// The store is a real redis-server when installed (else the JSON-lines file).
// Each case also times the app's first model call with its selection, where it imports the
// provider (all but lexical): the first answer.
// Each case runs RUNS (5) times, the cases in turn; figures are medians.
// Usage: npm run bench:cold-start (writes bench/results/cold-start.json;
// CPU_PROF_DIR=dir adds a V8 CPU profile per process).
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readToolCatalog } from '../src/retrieval/eval/catalog-file.ts';
import { startFakeOpenAI } from '../test/fixtures/fake-openai/fake-openai-server.ts';
import { startRedisServer } from '../test/helpers/redis-server.ts';
import { benchResults } from './bench-results.ts';

const TOOLS = 3000;
const RUNS = Number(process.env.RUNS ?? 5);
// The local model's store is Redis database 15; each round empties another one.
if (RUNS > 15) throw new Error('RUNS must be at most 15 (one Redis database per round)');
const results = benchResults({
  name: 'cold-start',
  command: 'npm run bench:cold-start',
  args: process.env.RUNS ? [`RUNS=${RUNS}`] : [],
  notes: [
    'wall time from process start to the first selection; medians of the rounds',
    'hybrid-local-cold runs once, before the rounds (it embeds 3,000 tools on the CPU)',
  ],
});
const QUERY = 'what will the weather be like in Paris tomorrow?';
const run = promisify(execFile);
const root = join(import.meta.dirname, '..');

// Real tool definitions (BFCL live functions), repeated with new names up to 3,000.
const dev = await readToolCatalog(join(root, 'test/fixtures/eval/dev/tools.jsonl'));
const tools = Array.from({ length: TOOLS }, (_, i) => {
  const tool = dev[i % dev.length]!;
  return {
    ...tool,
    name: i < dev.length ? tool.name : `${tool.name}_${Math.floor(i / dev.length)}`,
  };
});
const dir = await mkdtemp(join(tmpdir(), 'toolbelt-cold-start-'));
const catalog = join(dir, 'tools.json');
await writeFile(catalog, JSON.stringify(tools));

// The chat model answers every call with a short text: the app's first model call.
await using fake = await startFakeOpenAI({
  embeddingDimensions: 1536,
  script: () => ({ text: 'ok' }),
});
const redis = await startRedisServer().catch(() => undefined);
const storeName = redis ? 'redis' : 'file';

type CaseReport = {
  coldStartMs: number;
  /** Until the app's first model call answered (where the case has a provider). */
  firstAnswerMs?: number;
  cpuMs: number;
  rssMiB: number;
  phases: Record<string, number>;
  selected: string[];
  storeReads: number;
  snapshotHit: boolean;
  analysisHit: boolean;
};

async function coldStart(mode: 'lexical' | 'hybrid', storeEnv: Record<string, string>) {
  const from = fake.requests.length;
  // CPU_PROF_DIR=dir writes a V8 CPU profile per process, to see where the time goes.
  const profile = process.env.CPU_PROF_DIR
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.CPU_PROF_DIR}`]
    : [];
  const { stdout } = await run(
    process.execPath,
    [...profile, join(root, 'bench/cold-start-case.mjs')],
    {
      cwd: root,
      env: {
        ...process.env,
        MODE: mode,
        CATALOG: catalog,
        QUERY,
        OPENAI_BASE_URL: fake.baseURL,
        ...storeEnv,
      },
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as CaseReport & {
    embedCalls?: number;
    embeddedTexts?: number;
  };
  const embeddings = fake.requests.slice(from).filter(request => request.api === 'embeddings');
  // The local model's calls never reach the fake server: its case counts them.
  return {
    ...report,
    embedCalls: report.embedCalls ?? embeddings.length,
    embeddedTexts:
      report.embeddedTexts ??
      embeddings.reduce(
        (sum, request) => sum + ((request.body as { input: unknown[] }).input?.length ?? 0),
        0,
      ),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number) => Math.round(x * 10) / 10;
const cases: Record<string, Awaited<ReturnType<typeof coldStart>>[]> = {
  lexical: [],
  'lexical-app': [],
  'hybrid-cold': [],
  'hybrid-warm': [],
  'lexical-warm': [],
  'hybrid-local-cold': [],
  'hybrid-local-warm': [],
};
const localStoreEnv: Record<string, string> = redis
  ? { STORE: 'redis', REDIS_URL: `${redis.url}/15`, EMBEDDER: 'local' }
  : { STORE: 'file', CACHE_FILE: join(dir, 'embeddings-local.jsonl'), EMBEDDER: 'local' };
cases['hybrid-local-cold']!.push(await coldStart('hybrid', localStoreEnv));
for (let i = 0; i < RUNS; i++) {
  // Each round starts from an empty store: a new Redis prefix... by flushing, or a new file.
  const storeEnv: Record<string, string> = redis
    ? { STORE: 'redis', REDIS_URL: `${redis.url}/${i % 16}` }
    : { STORE: 'file', CACHE_FILE: join(dir, `embeddings-${i}.jsonl`) };
  cases.lexical!.push(await coldStart('lexical', {}));
  cases['lexical-app']!.push(await coldStart('lexical', { ...storeEnv, APP_IMPORTS: '1' }));
  cases['hybrid-cold']!.push(await coldStart('hybrid', storeEnv));
  cases['hybrid-warm']!.push(await coldStart('hybrid', storeEnv));
  cases['lexical-warm']!.push(
    await coldStart('lexical', { ...storeEnv, APP_IMPORTS: '1', LEXICAL_STORE: '1' }),
  );
  cases['hybrid-local-warm']!.push(await coldStart('hybrid', localStoreEnv));
}

const cold = cases['hybrid-cold']!;
const coldMs = median(cold.map(r => r.coldStartMs));
const coldIndexMs = median(cold.map(r => r.phases.indexMs!));
const lexicalMs = median(cases.lexical!.map(r => r.coldStartMs));
const lexicalAppMs = median(cases['lexical-app']!.map(r => r.coldStartMs));
const answerMs = (runs: CaseReport[]) =>
  runs[0]?.firstAnswerMs === undefined ? undefined : median(runs.map(r => r.firstAnswerMs!));
const lexicalAppAnswerMs = answerMs(cases['lexical-app']!)!;
const coldAnswerMs = answerMs(cold)!;
for (const [mode, runs] of Object.entries(cases)) {
  const coldStartMs = median(runs.map(r => r.coldStartMs));
  const phases = Object.fromEntries(
    Object.keys(runs[0]!.phases).map(phase => [
      phase,
      round(median(runs.map(r => r.phases[phase]!))),
    ]),
  );
  const firstAnswerMs = answerMs(runs);
  results.row({
    tools: TOOLS,
    mode,
    coldStartMs: round(coldStartMs),
    // The first answer, against the lexical app's (same imports) and the empty store's.
    ...(firstAnswerMs === undefined
      ? {}
      : {
          firstAnswerMs: round(firstAnswerMs),
          answerVsLexicalApp: Math.round((firstAnswerMs / lexicalAppAnswerMs) * 100) / 100,
          answerVsHybridCold: Math.round((firstAnswerMs / coldAnswerMs) * 100) / 100,
        }),
    embedCalls: median(runs.map(r => r.embedCalls)),
    embeddedTexts: median(runs.map(r => r.embeddedTexts)),
    cpuMs: round(median(runs.map(r => r.cpuMs))),
    rssMiB: round(median(runs.map(r => r.rssMiB))),
    ...(mode === 'lexical' || mode === 'lexical-app'
      ? {}
      : {
          store: storeName,
          storeReads: median(runs.map(r => r.storeReads)),
          snapshotHits: runs.filter(r => r.snapshotHit).length,
          analysisHits: runs.filter(r => r.analysisHit).length,
        }),
    // Ratios in this run: against the lexical start and the hybrid one with an empty store
    // (the whole start), and building the index alone against the empty-store one.
    vsLexical: Math.round((coldStartMs / lexicalMs) * 100) / 100,
    vsLexicalApp: Math.round((coldStartMs / lexicalAppMs) * 100) / 100,
    vsHybridCold: Math.round((coldStartMs / coldMs) * 100) / 100,
    indexVsHybridCold: Math.round((phases.indexMs! / coldIndexMs) * 100) / 100,
    phases,
    runs: runs.length,
  });
}
const selections = (mode: string) => new Set(cases[mode]!.map(r => r.selected.join()));
const sameSelection =
  [...selections('hybrid-warm')].join() === [...selections('hybrid-cold')].join();
if (!sameSelection) console.error('warning: warm and cold starts selected different tools');
results.row({ check: 'warm and cold select the same tools', ok: sameSelection });
const sameLocalSelection =
  [...selections('hybrid-local-warm')].join() === [...selections('hybrid-local-cold')].join();
if (!sameLocalSelection)
  console.error('warning: warm and cold starts with the local model selected different tools');
results.row({
  check: 'warm and cold select the same tools with the local model',
  ok: sameLocalSelection,
});
await results.save();

await redis?.stop();
await rm(dir, { recursive: true, force: true });
