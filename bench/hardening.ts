// What the sandbox hardening (merge 762d63a: supervisor-proven results, slot held until the
// container is gone, busy limits...) costs, measured by one bench against two versions of the
// code in one run: the commit before it (9a73ad8 by default; its src/ extracted with `git
// archive`) and the current code. Cases alternate between the versions run by run (cold, warm)
// and round by round (throughput), so a shared machine's drifting load hits both alike. Same
// cases and timing as bench:sandbox (sandbox-cases.ts), `print(1)`, pre-imports off.
// Usage: node bench/hardening.ts [--before 9a73ad8] [--runs 15] [--seconds 10] [--rounds 3]
//   [--warmup-runs 8] (writes bench/results/hardening.json)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import { DEFAULT_SANDBOX_IMAGE, DockerSandbox } from '../src/sandbox/index.ts';
import { benchResults } from './bench-results.ts';
import { idleMiB } from './idle-memory.ts';
import {
  type SandboxClass,
  type SandboxLike,
  coldOnce,
  percentile,
  round,
  sandboxThroughput,
  untilWarm,
  warmOnce,
} from './sandbox-cases.ts';

const { values } = parseArgs({
  options: {
    before: { type: 'string', default: '9a73ad8' },
    runs: { type: 'string', default: '15' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    'warmup-runs': { type: 'string', default: '8' },
    image: {
      type: 'string',
      default: process.env.AI_TOOLBELT_SANDBOX_IMAGE ?? DEFAULT_SANDBOX_IMAGE,
    },
  },
});
const runs = Number(values.runs);
const image = values.image;
const docker = new Docker();
const root = join(import.meta.dirname, '..');
const git = (...args: string[]) =>
  execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();

const before = git('rev-parse', '--short=12', values.before);
const scratch = mkdtempSync(join(tmpdir(), 'aitb-hardening-'));
try {
  execFileSync('sh', ['-c', `git archive ${before} src | tar -x -C ${scratch}`], { cwd: root });
  symlinkSync(join(root, 'node_modules'), join(scratch, 'node_modules'));
  const { DockerSandbox: Before } = (await import(join(scratch, 'src/sandbox/index.ts'))) as {
    DockerSandbox: SandboxClass;
  };
  const versions = {
    before: Before,
    after: DockerSandbox as unknown as SandboxClass,
  };
  const results = benchResults({
    name: 'hardening',
    command: 'npm run bench:hardening',
    docker,
    notes: [
      `before: ${before} (${git('log', '-1', '--format=%s', before)})`,
      'after: the code measured (machine.commit)',
      'cold and warm alternate run by run, throughput round by round',
    ],
  });
  const open = (Sandbox: SandboxClass, warmPoolSize: number) =>
    Sandbox.create({ docker, image, warmPoolSize, preimport: [] });
  const figures = {
    before: {
      cold: [] as number[],
      gone: [] as number[],
      warm: [] as number[],
      perSec: [] as number[],
      idle: 0,
    },
    after: {
      cold: [] as number[],
      gone: [] as number[],
      warm: [] as number[],
      perSec: [] as number[],
      idle: 0,
    },
  };
  const names = ['before', 'after'] as const;
  // Alternating which goes first, so neither always follows the other.
  const order = (i: number) => (i % 2 === 0 ? names : ([names[1], names[0]] as const));
  {
    const cold: Record<string, SandboxLike> = {};
    for (const name of names) cold[name] = await open(versions[name], 0);
    try {
      for (const name of names) await coldOnce(cold[name]!); // page-cache warm-up
      for (let i = 0; i < runs; i++) {
        for (const name of order(i)) {
          const { toResultMs, toGoneMs } = await coldOnce(cold[name]!);
          figures[name].cold.push(toResultMs);
          figures[name].gone.push(toGoneMs);
        }
      }
    } finally {
      for (const name of names) await cold[name]!.close();
    }
  }
  {
    const warm: Record<string, SandboxLike> = {};
    for (const name of names) warm[name] = await open(versions[name], 2);
    try {
      for (let i = 0; i < runs; i++) {
        for (const name of order(i)) {
          figures[name].warm.push(await warmOnce(warm[name]!, 2));
        }
      }
      for (const name of names) {
        await untilWarm(warm[name]!, 2);
        figures[name].idle = await idleMiB(docker, { instanceId: warm[name]!.instanceId });
      }
    } finally {
      for (const name of names) await warm[name]!.close();
    }
  }
  const window = {
    docker,
    image,
    preimport: false,
    seconds: Number(values.seconds),
    warmupRuns: Number(values['warmup-runs']),
  };
  for (let i = 0; i < Number(values.rounds); i++) {
    for (const name of order(i)) {
      figures[name].perSec.push(
        (await sandboxThroughput({ ...window, Sandbox: versions[name] })).perSec,
      );
    }
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  for (const name of names) {
    const f = figures[name];
    results.row({
      version: name,
      ...(name === 'before' ? { commit: before } : {}),
      runs,
      coldP50Ms: round(percentile(f.cold, 0.5)),
      coldRemovedP50Ms: round(percentile(f.gone, 0.5)),
      warmP50Ms: round(percentile(f.warm, 0.5)),
      idleMiB: round(f.idle),
      sustainedPerSec: round(mean(f.perSec)),
      perRound: f.perSec.map(x => Math.round(x * 100) / 100),
    });
  }
  const change = (key: 'cold' | 'gone' | 'warm') =>
    Math.round(
      (percentile(figures.after[key], 0.5) / percentile(figures.before[key], 0.5)) * 1000,
    ) / 1000;
  results.row({
    case: 'after-over-before',
    cold: change('cold'),
    coldRemoved: change('gone'),
    warm: change('warm'),
    sustained: Math.round((mean(figures.after.perSec) / mean(figures.before.perSec)) * 1000) / 1000,
  });
  await results.save();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
