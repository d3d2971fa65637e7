// Sandbox latency and throughput, under the real Docker engine and gVisor (runsc).
// - cold: a sandbox without warm pool; each `print(1)` is create + attach + start + run, timed
//   to its result (the removal runs after it, untimed, as for warm runs);
// - warm: a pool of 2 pre-started containers, measured with the pool refilled between runs
//   and its bootstrap waiting for code (a pool hit); same run, same machine, so warm/cold is a
//   fair ratio;
// - sustained: 4 callers in a closed loop through a pool of 4, refilling as they go (with
//   `--starts` starts at once); then the same with pre-imports on (each container imports
//   numpy, pandas and matplotlib while it waits: far fewer per second);
// - engine floor: the same containers run the same way (bootstrap command, attach + stdin,
//   wait, removal waited for) by bare dockerode loops, as many at once as the sandbox starts
//   (see engine-floor.ts): what the engine sustains without the sandbox's code, measured in
//   the same run, in rounds alternating with the sustained loop (3 of each, pool full again
//   before each) so that a shared machine's drifting load hits both alike. sustainedOverFloor
//   is the pool's share of it;
// - idle memory: of idle warm containers, as docker stats counts it (see idle-memory.ts);
// - leaked: labelled containers of this process left after every sandbox is closed.
// These use `print(1)` with pre-imports off, to measure the container path itself.
// Then the data stack (see data-stack.ts): a pandas + chart snippet cold, warm, and warm with
// pre-imports. Then conversation interpreters against warm one-shot runs (see conversation.ts).
// Prints one JSON line per measurement.
// Usage: node bench/sandbox.ts [--runs 30] [--seconds 15] [--starts 2] [--data-runs 8]
//   [--restores 3] [--only basic|data|conversation]
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import { DEFAULT_SANDBOX_IMAGE, DockerSandbox } from '../src/sandbox/index.ts';
import { listSandboxContainers } from '../src/internal.ts';
import { benchConversation } from './conversation.ts';
import { benchDataStack } from './data-stack.ts';
import { engineFloor } from './engine-floor.ts';
import { idleMiB } from './idle-memory.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '30' },
    seconds: { type: 'string', default: '15' },
    starts: { type: 'string' },
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
const image = values.image;
// The sandbox's default unless given.
const starts = values.starts === undefined ? undefined : Number(values.starts);
const docker = new Docker();

const percentile = (xs: number[], p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
};
const round = (x: number): number => Math.round(x * 10) / 10;

function check(result: { status: string; stdout: string }): void {
  if (result.status !== 'success' || result.stdout !== '1\n') {
    throw new Error(`unexpected result: ${JSON.stringify(result)}`);
  }
}

/** Until `size` warm containers are ready: started, and their bootstrap waits for code. */
async function untilWarm(sandbox: DockerSandbox, size: number): Promise<void> {
  await sandbox.waitForCleanup();
  while (sandbox.warmReadyCount < size) await new Promise(resolve => setTimeout(resolve, 20));
}

async function cold(): Promise<number[]> {
  await using sandbox = await DockerSandbox.create({
    docker,
    image,
    warmPoolSize: 0,
    preimport: [],
  });
  check(await sandbox.execute('print(1)')); // first start pays image/page-cache warm-up
  await sandbox.waitForCleanup();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    check(await sandbox.execute('print(1)'));
    times.push(performance.now() - started);
    await sandbox.waitForCleanup();
  }
  return times;
}

async function warm(): Promise<{ times: number[]; idleMiB: number; runtime: string }> {
  const size = 2;
  await using sandbox = await DockerSandbox.create({
    docker,
    image,
    warmPoolSize: size,
    preimport: [],
  });
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    await untilWarm(sandbox, size);
    const started = performance.now();
    check(await sandbox.execute('print(1)'));
    times.push(performance.now() - started);
  }
  await untilWarm(sandbox, size);
  return { times, idleMiB: await idleMiB(docker), runtime: sandbox.runtime ?? '?' };
}

/**
 * The sustained loop (4 callers, pool of 4) and, with `floorRounds`, the engine floor measured
 * in alternating rounds (sustained, floor, sustained, floor...) with the pool full again before
 * each: on a shared machine the load drifts, and alternating puts both under the same drift.
 */
async function sustained({ preimport, rounds }: { preimport: boolean; rounds: number }): Promise<{
  perSec: number;
  count: number;
  maxConcurrentStarts: number;
  floorPerSec: number;
}> {
  await using sandbox = await DockerSandbox.create({
    docker,
    image,
    warmPoolSize: 4,
    maxConcurrentExecutions: 4,
    ...(starts === undefined ? {} : { maxConcurrentStarts: starts }),
    ...(preimport ? {} : { preimport: [] }),
  });
  // What DockerSandbox resolved for the start concurrency (its default unless --starts).
  const { maxConcurrentStarts } = (
    sandbox as unknown as { options: { maxConcurrentStarts: number } }
  ).options;
  const ready = () => untilWarm(sandbox, 4);
  let count = 0;
  let sustainedMs = 0;
  let floorRuns = 0;
  let floorMs = 0;
  for (let round = 0; round < rounds; round++) {
    await ready();
    const deadline = performance.now() + (seconds * 1000) / rounds;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (performance.now() < deadline) {
          check(await sandbox.execute('print(1)', { timeoutMs: 60_000 }));
          count++;
        }
      }),
    );
    await sandbox.waitForCleanup();
    sustainedMs += performance.now() - started;
    if (preimport) continue;
    await ready();
    const floor = await engineFloor({
      docker,
      image,
      runtime: sandbox.runtime ?? 'runsc',
      workers: maxConcurrentStarts,
      seconds: seconds / rounds,
    });
    floorRuns += floor.count;
    floorMs += floor.ms;
  }
  return {
    perSec: count / (sustainedMs / 1000),
    count,
    maxConcurrentStarts,
    floorPerSec: floorMs > 0 ? floorRuns / (floorMs / 1000) : Number.NaN,
  };
}

async function basic(): Promise<object> {
  const coldTimes = await cold();
  const warmRun = await warm();
  const sustainedRun = await sustained({ preimport: false, rounds: 3 });
  const floorPerSec = sustainedRun.floorPerSec;
  const preimported = await sustained({ preimport: true, rounds: 1 });
  const coldP50 = percentile(coldTimes, 0.5);
  const warmP50 = percentile(warmRun.times, 0.5);
  return {
    bench: 'sandbox',
    snippet: 'print(1)',
    runtime: warmRun.runtime,
    runs,
    coldP50Ms: round(coldP50),
    coldP90Ms: round(percentile(coldTimes, 0.9)),
    warmP50Ms: round(warmP50),
    warmP90Ms: round(percentile(warmRun.times, 0.9)),
    warmOverCold: Math.round((warmP50 / coldP50) * 1000) / 1000,
    maxConcurrentStarts: sustainedRun.maxConcurrentStarts,
    sustainedPerSec: round(sustainedRun.perSec),
    sustainedRuns: sustainedRun.count,
    engineFloorPerSec: round(floorPerSec),
    sustainedOverFloor: Math.round((sustainedRun.perSec / floorPerSec) * 1000) / 1000,
    sustainedPreimportPerSec: round(preimported.perSec),
    sustainedPreimportRuns: preimported.count,
    idleMiB: round(warmRun.idleMiB),
  };
}

const only = values.only;
if (only === undefined || only === 'basic') console.log(JSON.stringify(await basic()));
if (only === undefined || only === 'data') {
  const lines = await benchDataStack({ docker, image, runs: Number(values['data-runs']) });
  for (const line of lines) console.log(JSON.stringify(line));
}
if (only === undefined || only === 'conversation') {
  const restores = Number(values.restores);
  console.log(JSON.stringify(await benchConversation({ docker, image, runs, restores })));
}
const leaked = (await listSandboxContainers({ docker, pid: process.pid })).length;
console.log(JSON.stringify({ bench: 'sandbox', leaked }));
