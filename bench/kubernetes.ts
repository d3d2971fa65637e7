// bench:sandbox --only kubernetes: the Kubernetes engine beside the Docker engine, on the same
// machine in the same run (the local cluster of scripts/setup-kubernetes.sh: its pods run under
// the same runsc, through a second containerd and a kubelet). For each engine: cold and warm
// `print(1)` (pre-imports off, as the basic rows), a `print(1)` cell of a live interpreter, and
// sustained runs/s of 4 callers through a pool of 4 with 4 slots; and what each left behind.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import {
  DockerSandbox,
  type DockerSandboxOptions,
  type KubernetesEngineOptions,
} from '../src/sandbox/index.ts';
import { listSandboxContainers } from '../src/internal.ts';
import { closedLoop } from './closed-loop.ts';
import { check, coldOnce, percentile, round, warmOnce } from './sandbox-cases.ts';

const run = promisify(execFile);
/** The local cluster's kubeconfig (AI_TOOLBELT_KUBECONFIG for another cluster). */
export const KUBERNETES_CONFIG =
  process.env.AI_TOOLBELT_KUBECONFIG ?? '/etc/ai-toolbelt/kubernetes/admin.kubeconfig';
const KUBECONFIG = KUBERNETES_CONFIG;
const KUBECTL = process.env.AI_TOOLBELT_KUBECTL ?? '/var/lib/ai-toolbelt/kubernetes/bin/kubectl';
const MANIFEST = join(import.meta.dirname, '..', 'docs', 'kubernetes', 'sandbox-namespace.yaml');

async function kubectl(args: string[], input?: string): Promise<string> {
  const child = run(KUBECTL, ['--kubeconfig', KUBECONFIG, ...args], { maxBuffer: 1 << 24 });
  if (input !== undefined) child.child.stdin?.end(input);
  return (await child).stdout;
}

/** A namespace made from the how-to's manifest; removed by the returned function. */
async function namespace(): Promise<{ name: string; remove(): Promise<void> }> {
  const name = `aitb-bench-${randomBytes(4).toString('hex')}`;
  await kubectl(
    ['apply', '-f', '-'],
    readFileSync(MANIFEST, 'utf8').replaceAll('ai-toolbelt-sandbox', name),
  );
  for (let i = 0; i < 150; i++) {
    if ((await kubectl(['get', 'serviceaccounts', '-n', name, '-o', 'name'])).includes('default'))
      break;
    await new Promise(resolve => setTimeout(resolve, 200));
  }
  return {
    name,
    remove: async () => void (await kubectl(['delete', 'namespace', name, '--wait=true'])),
  };
}

/** The rows of one engine: latency, a cell, sustained runs/s, what was left. */
async function measure({
  engine,
  options,
  runs,
  seconds,
  warmupRuns,
  left,
}: {
  engine: 'docker' | 'kubernetes';
  options: DockerSandboxOptions;
  runs: number;
  seconds: number;
  warmupRuns: number;
  left: () => Promise<number>;
}): Promise<Record<string, unknown>> {
  const cold: number[] = [];
  {
    await using sandbox = await DockerSandbox.create({ ...options, warmPoolSize: 0 });
    await coldOnce(sandbox); // the first start pays image and page-cache warm-up
    for (let i = 0; i < runs; i++) cold.push((await coldOnce(sandbox)).toResultMs);
  }
  const warm: number[] = [];
  {
    await using sandbox = await DockerSandbox.create({ ...options, warmPoolSize: 2 });
    for (let i = 0; i < runs; i++) warm.push(await warmOnce(sandbox, 2));
  }
  const cells: number[] = [];
  {
    await using sandbox = await DockerSandbox.create({
      ...{ ...options, warmPoolSize: 0 },
      conversations: { warmPoolSize: 0 },
    });
    const conversation = { id: 'bench', userId: 'bench' };
    await sandbox.executeCell('x = 1', { conversation, timeoutMs: 120_000 });
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      check(await sandbox.executeCell('print(1)', { conversation }));
      cells.push(performance.now() - started);
    }
  }
  let sustained: number;
  {
    await using sandbox = await DockerSandbox.create({
      ...{ ...options, warmPoolSize: 4, maxConcurrentExecutions: 4 },
    });
    const loop = await closedLoop({
      ...{ callers: 4, warmupRuns, seconds },
      run: async () => check(await sandbox.execute('print(1)', { timeoutMs: 120_000 })),
    });
    sustained = loop.perSec;
  }
  return {
    case: 'engines',
    engine,
    snippet: 'print(1)',
    runs,
    coldP50Ms: round(percentile(cold, 0.5)),
    coldP90Ms: round(percentile(cold, 0.9)),
    warmP50Ms: round(percentile(warm, 0.5)),
    warmP90Ms: round(percentile(warm, 0.9)),
    cellP50Ms: round(percentile(cells, 0.5)),
    cellP90Ms: round(percentile(cells, 0.9)),
    sustainedPerSec: round(sustained * 10) / 10,
    callers: 4,
    secondsPerWindow: seconds,
    left: await left(),
  };
}

/**
 * The Docker engine, then the Kubernetes engine (a fresh namespace of the local cluster), with
 * the same image, limits and cases; one row each.
 *
 * @example
 * ```ts
 * const rows = await benchEngines({ docker, image, runs: 30, seconds: 20, warmupRuns: 8 });
 * ```
 */
export async function benchEngines({
  docker,
  image,
  runs,
  seconds,
  warmupRuns,
}: {
  docker: Docker;
  image: string;
  runs: number;
  seconds: number;
  warmupRuns: number;
}): Promise<Record<string, unknown>[]> {
  const common = { image, preimport: [] as string[] };
  const rows = [
    await measure({
      ...{ engine: 'docker', options: { ...common, docker }, runs, seconds, warmupRuns },
      left: async () => (await listSandboxContainers({ docker, pid: process.pid })).length,
    }),
  ];
  const ns = await namespace();
  try {
    const kubernetes: KubernetesEngineOptions = {
      ...{ kubeconfig: KUBECONFIG, namespace: ns.name, imagePullPolicy: 'Never' },
    };
    rows.push(
      await measure({
        engine: 'kubernetes',
        options: { ...common, engines: [{ kubernetes }] },
        ...{ runs, seconds, warmupRuns },
        left: async () =>
          JSON.parse(await kubectl(['get', 'pods', '-n', ns.name, '-o', 'json'])).items.length,
      }),
    );
  } finally {
    await ns.remove();
  }
  return rows;
}
