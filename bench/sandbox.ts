// Sandbox latency, throughput and sizing, under the real Docker engine and gVisor (runsc).
// Sections (each writes its own results file; `--only` runs one):
// - basic (bench/results/sandbox.json), `print(1)` with pre-imports off, to measure the
//   container path itself:
//   - cold: a sandbox without warm pool; each run is create + attach + start + run, timed to its
//     result (what the caller waits for) and to its container being gone (the removal after);
//   - warm: a pool of 2, refilled and ready before each run (a pool hit), timed to its result
//     (the removal follows, untimed, as for cold runs);
//   - throughput: 4 callers in a closed loop through a pool of 4 with 4 execution slots, in
//     steady state (see closed-loop.ts: the window opens after the first runs, so the pool
//     readied before the loop is not counted); against the engine floor (engine-floor.ts: the
//     same containers, pipelining and teardown by bare dockerode calls), with the slot held
//     until the container is gone (as the sandbox does) and given back at the done marker (what
//     holding it costs). Rounds alternate sandbox, floor and floor released at the marker, so a
//     shared machine's drifting load hits all alike. Then the sandbox with pre-imports on;
//   - idle memory of a warm container (idle-memory.ts); leaked: labelled containers of this
//     process left after every sandbox is closed;
// - sizing (sizing.json): CPU-seconds per start with and without pre-imports, idle MiB;
// - data (data-stack.json): a pandas + chart snippet cold, warm, and warm with pre-imports;
// - conversation (conversation.json): conversation interpreters against warm one-shot runs, and
//   notebook cells (the display machinery's cost; interrupting a cell against killing it and
//   replaying);
// - conversation-burst (conversation-burst.json): a burst of 50 new conversations from 50 users
//   on two replicas sharing a redis-server store (started by the bench) against
//   maxInterpreters 8, then the same burst on a store without Redis;
// - kubernetes (sandbox-kubernetes.json): the Kubernetes engine beside the Docker engine, the
//   same cases for each (see kubernetes.ts); needs the local cluster (setup-kubernetes.sh).
// Prints one JSON line per measurement.
// Usage: node bench/sandbox.ts [--runs 30] [--seconds 10] [--rounds 3] [--warmup-runs 8]
//   [--starts 2] [--sizing-starts 6] [--data-runs 8] [--restores 3]
//   [--only basic|sizing|data|conversation|conversation-burst|kubernetes]
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import { DEFAULT_SANDBOX_IMAGE, DockerSandbox } from '../src/sandbox/index.ts';
import { listSandboxContainers } from '../src/internal.ts';
import { benchResults } from './bench-results.ts';
import { benchConversation } from './conversation.ts';
import { benchConversationBurst } from './conversation-burst.ts';
import { benchNotebookCells } from './notebook-cells.ts';
import { benchDataStack } from './data-stack.ts';
import { KUBERNETES_CONFIG, benchEngines } from './kubernetes.ts';
import { engineFloor } from './engine-floor.ts';
import { idleMiB } from './idle-memory.ts';
import {
  type SandboxClass,
  coldOnce,
  percentile,
  round,
  sandboxThroughput,
  untilWarm,
  warmOnce,
} from './sandbox-cases.ts';
import { benchSizing } from './sizing.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '30' },
    seconds: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '3' },
    'warmup-runs': { type: 'string', default: '8' },
    starts: { type: 'string' },
    'sizing-starts': { type: 'string', default: '6' },
    'data-runs': { type: 'string', default: '8' },
    restores: { type: 'string', default: '3' },
    only: { type: 'string' },
    image: {
      type: 'string',
      default: process.env.AI_TOOLBELT_SANDBOX_IMAGE ?? DEFAULT_SANDBOX_IMAGE,
    },
  },
});
const runs = Number(values.runs);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const warmupRuns = Number(values['warmup-runs']);
const image = values.image;
// The sandbox's default unless given.
const starts = values.starts === undefined ? undefined : Number(values.starts);
const docker = new Docker();
const Sandbox = DockerSandbox as unknown as SandboxClass;
const ratio = (x: number): number => Math.round(x * 1000) / 1000;
const results = (name: string, notes: string[]) =>
  benchResults({ name, command: 'npm run bench:sandbox', docker, notes });

async function latency(): Promise<Record<string, unknown>> {
  const toResult: number[] = [];
  const toGone: number[] = [];
  {
    await using sandbox = await DockerSandbox.create({
      docker,
      image,
      warmPoolSize: 0,
      preimport: [],
    });
    await coldOnce(sandbox); // the first start pays image and page-cache warm-up
    for (let i = 0; i < runs; i++) {
      const { toResultMs, toGoneMs } = await coldOnce(sandbox);
      toResult.push(toResultMs);
      toGone.push(toGoneMs);
    }
  }
  const size = 2;
  await using sandbox = await DockerSandbox.create({
    docker,
    image,
    warmPoolSize: size,
    preimport: [],
  });
  const warm: number[] = [];
  for (let i = 0; i < runs; i++) warm.push(await warmOnce(sandbox, size));
  await untilWarm(sandbox, size);
  const coldP50 = percentile(toResult, 0.5);
  const warmP50 = percentile(warm, 0.5);
  return {
    case: 'latency',
    snippet: 'print(1)',
    runtime: sandbox.runtime ?? '?',
    runs,
    coldP50Ms: round(coldP50),
    coldP90Ms: round(percentile(toResult, 0.9)),
    coldRemovedP50Ms: round(percentile(toGone, 0.5)),
    coldRemovedP90Ms: round(percentile(toGone, 0.9)),
    warmP50Ms: round(warmP50),
    warmP90Ms: round(percentile(warm, 0.9)),
    warmOverCold: ratio(warmP50 / coldP50),
    idleMiB: round(await idleMiB(docker, { instanceId: sandbox.instanceId })),
  };
}

async function throughput(): Promise<Record<string, unknown>> {
  const window = { Sandbox, docker, image, starts, seconds, warmupRuns };
  const runtime = (await docker.info()).Runtimes?.runsc ? 'runsc' : 'runc';
  const perRound = {
    sustained: [] as number[],
    floor: [] as number[],
    floorAtMarker: [] as number[],
  };
  for (let round = 0; round < rounds; round++) {
    perRound.sustained.push((await sandboxThroughput({ ...window, preimport: false })).perSec);
    const floor = { docker, image, runtime, seconds, warmupRuns };
    const maxConcurrentStarts = starts ?? 2;
    perRound.floor.push((await engineFloor({ ...floor, maxConcurrentStarts })).perSec);
    perRound.floorAtMarker.push(
      (await engineFloor({ ...floor, maxConcurrentStarts, holdSlotUntilRemoved: false })).perSec,
    );
  }
  const preimported = await sandboxThroughput({ ...window, preimport: true });
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const sustained = mean(perRound.sustained);
  const floor = mean(perRound.floor);
  const floorAtMarker = mean(perRound.floorAtMarker);
  return {
    case: 'throughput',
    snippet: 'print(1)',
    callers: 4,
    warmPoolSize: 4,
    maxConcurrentExecutions: 4,
    maxConcurrentStarts: starts ?? 2,
    rounds,
    secondsPerWindow: seconds,
    warmupRuns,
    sustainedPerSec: round(sustained),
    floorPerSec: round(floor),
    sustainedOverFloor: ratio(sustained / floor),
    floorReleasedAtMarkerPerSec: round(floorAtMarker),
    slotHoldCost: ratio(1 - floor / floorAtMarker),
    sustainedPreimportPerSec: round(preimported.perSec),
    perRound: Object.fromEntries(
      Object.entries(perRound).map(([key, xs]) => [key, xs.map(x => Math.round(x * 100) / 100)]),
    ),
  };
}

const only = values.only;
const wanted = (section: string) => only === undefined || only === section;
if (wanted('basic')) {
  const file = results('sandbox', [
    'cold: no warm pool, timed to the result and to the container being gone',
    'warm: a ready pool container (pool refilled between runs), timed to the result',
    'throughput: steady state after the warm-up runs, mean of the rounds',
  ]);
  file.row(await latency());
  file.row(await throughput());
  file.row({
    case: 'leaked',
    leaked: (await listSandboxContainers({ docker, pid: process.pid })).length,
  });
  await file.save();
}
if (wanted('sizing')) {
  const file = results('sizing', [
    'one container at a time, measured once its bootstrap waits for code; medians',
  ]);
  const runtime = (await docker.info()).Runtimes?.runsc ? 'runsc' : 'runc';
  const starts = Number(values['sizing-starts']);
  for (const row of await benchSizing({ docker, image, runtime, starts })) file.row(row);
  await file.save();
}
if (wanted('data')) {
  const file = results('data-stack', ['pandas + groupby + chart snippet; p50 of the runs']);
  const lines = await benchDataStack({ docker, image, runs: Number(values['data-runs']) });
  for (const line of lines) file.row(line as Record<string, unknown>);
  await file.save();
}
if (wanted('conversation')) {
  const file = results('conversation', ['cells against one-shot runs, alternating']);
  const restores = Number(values.restores);
  file.row((await benchConversation({ docker, image, runs, restores })) as Record<string, unknown>);
  file.row(await benchNotebookCells({ docker, image, runs }));
  await file.save();
}
if (wanted('conversation-burst')) {
  const file = results('conversation-burst', [
    '50 users at once over two replicas sharing a redis-server store, then over a store without Redis',
  ]);
  file.row(await benchConversationBurst({ docker, image }));
  await file.save();
}
// Only with the local cluster (or asked for by name, which then says what is missing).
if (only === 'kubernetes' || (only === undefined && existsSync(KUBERNETES_CONFIG))) {
  const file = results('sandbox-kubernetes', [
    'each engine in turn, the same image and limits; pre-imports off',
    'cold: no warm pool; warm: a ready pool box (refilled between runs); cell: print(1) in a live interpreter',
    'sustained: 4 callers, a pool of 4, 4 slots, steady state after the warm-up runs',
  ]);
  const rows = await benchEngines({ docker, image, runs, seconds, warmupRuns });
  for (const row of rows) file.row(row);
  await file.save();
}
const leaked = await listSandboxContainers({ docker, pid: process.pid });
if (leaked.length > 0) {
  console.error(`leaked containers: ${leaked.map(info => info.Id.slice(0, 12)).join(' ')}`);
  process.exitCode = 1;
}
