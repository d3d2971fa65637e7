// What a results file says about the machine it was measured on, so a figure in the docs can be
// read against it: cores, CPU, memory, Node and V8, the Docker engine and runsc (sandbox benches),
// the commit measured, and the load average over the run (sampled, since a shared machine's load
// changes a wall-clock figure more than anything in the code).
import { execFile } from 'node:child_process';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { promisify } from 'node:util';
import type Docker from 'dockerode';

const run = promisify(execFile);

/** The machine a bench ran on. */
export type MachineFacts = {
  /** ISO date and time the bench finished. */
  date: string;
  /** CPUs the process may use. */
  cores: number;
  /** CPU model name. */
  cpu: string;
  /** Total memory, GiB. */
  memoryGiB: number;
  /** `process.version`. */
  node: string;
  /** V8's version (the JavaScript engine). */
  v8: string;
  /** The Docker engine and its runsc, for benches that use one. */
  engine?: { docker: string; runtimes: string[]; runsc?: string };
  /** The commit measured, `-dirty` when its code (src/, bench/) had uncommitted changes. */
  commit: string;
  /** 1-minute load average at the start, at the end, and the highest seen in between. */
  loadAverage: { start: number; end: number; max: number };
};

/**
 * Samples the 1-minute load average every few seconds from now until `facts()` is called, then
 * returns the machine facts.
 *
 * @example
 * ```ts
 * const machine = watchMachine({ docker });
 * // ...the bench...
 * const facts = await machine.facts();
 * ```
 */
export function watchMachine({
  docker,
  sampleEveryMs = 5_000,
}: {
  /** The Docker engine the bench uses, if any. */
  docker?: Docker;
  /** How often the load average is sampled. */
  sampleEveryMs?: number;
} = {}): { facts(): Promise<MachineFacts> } {
  const start = loadavg()[0]!;
  let max = start;
  const timer = setInterval(() => (max = Math.max(max, loadavg()[0]!)), sampleEveryMs);
  timer.unref();
  return {
    async facts() {
      clearInterval(timer);
      const end = loadavg()[0]!;
      const round = (x: number) => Math.round(x * 100) / 100;
      return {
        date: new Date().toISOString(),
        cores: availableParallelism(),
        cpu: cpus()[0]?.model.trim() ?? 'unknown',
        memoryGiB: Math.round(totalmem() / 2 ** 30),
        node: process.version,
        v8: process.versions.v8,
        ...(docker ? { engine: await engineFacts(docker) } : {}),
        commit: await commit(),
        loadAverage: { start: round(start), end: round(end), max: round(Math.max(max, end)) },
      };
    },
  };
}

async function engineFacts(docker: Docker): Promise<NonNullable<MachineFacts['engine']>> {
  const [version, info] = await Promise.all([
    docker.version(),
    docker.info() as Promise<{ Runtimes?: Record<string, { path?: string }> }>,
  ]);
  const runtimes = Object.keys(info.Runtimes ?? {}).sort();
  const runscPath = info.Runtimes?.runsc?.path ?? 'runsc';
  const runsc = await run(runscPath, ['--version']).then(
    ({ stdout }) => stdout.split('\n')[0]!.replace(/^runsc version /, ''),
    () => undefined,
  );
  return { docker: version.Version, runtimes, ...(runsc ? { runsc } : {}) };
}

async function commit(): Promise<string> {
  const cwd = new URL('..', import.meta.url).pathname;
  try {
    const head = (await run('git', ['rev-parse', '--short=12', 'HEAD'], { cwd })).stdout.trim();
    // Results files and docs change as benches run; only the code measured counts.
    const changed = await run(
      'git',
      ['status', '--porcelain', '--', 'src', 'bench', 'package.json', ':(exclude)bench/results'],
      { cwd },
    );
    return changed.stdout.trim() === '' ? head : `${head}-dirty`;
  } catch {
    return 'unknown';
  }
}
