// bench:agent-sandbox: the Kubernetes engine taking its pods through agent-sandbox's claims beside
// the same engine making its own pods, on the local cluster (scripts/setup-kubernetes.sh
// --agent-sandbox), in the same run: cold `print(1)` (no warm pod: a claim the controller serves
// with a new Sandbox, against a pod the engine creates) and warm `print(1)` (a Ready warm pod:
// a claim bound to a SandboxWarmPool's, against a pod of the engine's own pool); and what each
// left behind. Pre-imports off.
//
//   npm run bench:agent-sandbox [-- --runs 10]
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import {
  DockerSandbox,
  type DockerSandboxOptions,
  type KubernetesEngineOptions,
} from '../src/sandbox/index.ts';
import { DEFAULT_SANDBOX_IMAGE } from '../src/sandbox/options/default-image.ts';
import { benchResults } from './bench-results.ts';
import { check, coldOnce, percentile, round, warmOnce } from './sandbox-cases.ts';

const run = promisify(execFile);
const KUBECONFIG =
  process.env.AI_TOOLBELT_KUBECONFIG ?? '/etc/ai-toolbelt/kubernetes/admin.kubeconfig';
const KUBECTL = process.env.AI_TOOLBELT_KUBECTL ?? '/var/lib/ai-toolbelt/kubernetes/bin/kubectl';
const DOCS = join(import.meta.dirname, '..', 'docs', 'kubernetes');
const { values } = parseArgs({ options: { runs: { type: 'string', default: '10' } } });
const runs = Number(values.runs);
const image = process.env.AI_TOOLBELT_SANDBOX_IMAGE ?? DEFAULT_SANDBOX_IMAGE;

async function kubectl(args: string[], input?: string): Promise<string> {
  const child = run(KUBECTL, ['--kubeconfig', KUBECONFIG, ...args], { maxBuffer: 1 << 24 });
  if (input !== undefined) child.child.stdin?.end(input);
  return (await child).stdout;
}

const name = `aitb-bench-agent-${randomBytes(4).toString('hex')}`;
for (const file of ['sandbox-namespace.yaml', 'agent-sandbox-role.yaml']) {
  await kubectl(
    ['apply', '-f', '-'],
    readFileSync(join(DOCS, file), 'utf8').replaceAll('ai-toolbelt-sandbox', name),
  );
}
while (!(await kubectl(['get', 'serviceaccounts', '-n', name, '-o', 'name'])).includes('default')) {
  await new Promise(resolve => setTimeout(resolve, 200));
}

/** The namespace's execute pool once it has `size` Ready sandboxes. */
async function untilPoolReady(size: number): Promise<void> {
  for (;;) {
    const pools = JSON.parse(await kubectl(['get', 'sandboxwarmpools', '-n', name, '-o', 'json']))
      .items as Array<{ metadata: { name: string }; status?: { readyReplicas?: number } }>;
    const pool = pools.find(found => found.metadata.name.startsWith('ai-toolbelt-execute-'));
    if ((pool?.status?.readyReplicas ?? 0) >= size) return;
    await new Promise(resolve => setTimeout(resolve, 100));
  }
}

async function measure(agentSandbox: boolean): Promise<Record<string, unknown>> {
  const engine = (warm: number): DockerSandboxOptions['engines'] => {
    const kubernetes: KubernetesEngineOptions = {
      ...{ kubeconfig: KUBECONFIG, namespace: name, imagePullPolicy: 'Never' },
      ...(agentSandbox ? { agentSandbox: { warmPoolSize: warm } } : {}),
    };
    return [{ kubernetes }];
  };
  const common = { image, preimport: [] as string[] };
  const cold: number[] = [];
  {
    await using sandbox = await DockerSandbox.create({
      ...{ ...common, engines: engine(0), warmPoolSize: 0 },
    });
    await coldOnce(sandbox); // the first start pays the page cache (and makes the template)
    for (let i = 0; i < runs; i++) cold.push((await coldOnce(sandbox)).toResultMs);
  }
  const warm: number[] = [];
  {
    await using sandbox = await DockerSandbox.create({
      ...{ ...common, engines: engine(2), warmPoolSize: agentSandbox ? 0 : 2 },
    });
    if (agentSandbox) {
      // The pool of the same template (made by the cold runs with 0 replicas) is resized.
      const pool = (await kubectl(['get', 'sandboxwarmpools', '-n', name, '-o', 'name'])).trim();
      await kubectl(['patch', pool, '-n', name, '--type=merge', '-p', '{"spec":{"replicas":2}}']);
    }
    for (let i = 0; i < runs; i++) {
      if (!agentSandbox) {
        warm.push(await warmOnce(sandbox, 2));
        continue;
      }
      await sandbox.waitForCleanup();
      await untilPoolReady(2);
      const started = performance.now();
      check(await sandbox.execute('print(1)'));
      warm.push(performance.now() - started);
    }
  }
  const left = async (kind: string) =>
    JSON.parse(await kubectl(['get', kind, '-n', name, '-o', 'json'])).items.length as number;
  const row = {
    case: 'agent-sandbox',
    engine: agentSandbox ? 'kubernetes+agent-sandbox' : 'kubernetes',
    snippet: 'print(1)',
    runs,
    coldP50Ms: round(percentile(cold, 0.5)),
    coldP90Ms: round(percentile(cold, 0.9)),
    warmP50Ms: round(percentile(warm, 0.5)),
    warmP90Ms: round(percentile(warm, 0.9)),
    claimsLeft: await left('sandboxclaims'),
  };
  if (agentSandbox) {
    await kubectl(['delete', 'sandboxwarmpools,sandboxtemplates', '--all', '-n', name]);
  }
  return row;
}

const file = benchResults({
  name: 'sandbox-agent-sandbox',
  command: 'npm run bench:agent-sandbox',
  notes: [
    'the local cluster, one namespace; the same image, limits and cases for both; pre-imports off',
    'cold: no warm pod (a claim served with a new Sandbox; a pod the engine creates)',
    "warm: a Ready warm pod (a claim on a SandboxWarmPool of 2; the engine's own pool of 2)",
  ],
});
try {
  const own = await measure(false);
  file.row(own);
  const claimed = await measure(true);
  file.row(claimed);
  file.row({
    case: 'agent-sandbox-ratio',
    coldOverOwn: round((claimed.coldP50Ms as number) / (own.coldP50Ms as number)),
    warmOverOwn: round((claimed.warmP50Ms as number) / (own.warmP50Ms as number)),
  });
} finally {
  await kubectl(['delete', 'namespace', name, '--wait=true']);
}
await file.save();
