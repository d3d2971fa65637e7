// Sandbox fleet benchmarks, against two real engines: the host's dockerd (local socket) and a
// second dockerd with mutual TLS on 127.0.0.1:2376 (scripts/setup-sandbox-host.sh --name docker2,
// started here if it is not running; root needed).
// - tcp-tls: warm latency of `print(1)` on engine 2 over TCP + mutual TLS, against the same
//   engine over its unix socket, measured alternately in the same run (same engine, only the
//   transport differs);
// - failover: 4 callers in a closed loop over both engines (pools of 4, so either engine alone
//   serves them all without queueing); engine 2's dockerd is killed with -9 mid-way.
//   failoverMs is the time from the kill to the first success of a run submitted after it
//   (detection, re-placement and a run on engine 1), detectMs the time until engine 2 is
//   marked down; lostRuns the runs that rejected (in flight on engine 2);
//   duplicateRuns the codes that reached more than one container; then engine 2 is
//   restarted, readmitMs is the time from its restart to its re-admission, and leaked the
//   containers of the sandbox left on either engine after close().
// Prints JSON lines. Usage: node bench/fleet.ts [--runs 30] [--seconds 8]
// (writes bench/results/fleet.json)
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import { DEFAULT_SANDBOX_IMAGE, DockerSandbox } from '../src/sandbox/index.ts';
import { listSandboxContainers } from '../src/internal.ts';
import { recordingDocker } from '../test/sandbox/fleet/recording-docker.ts';
import { benchResults } from './bench-results.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '30' },
    seconds: { type: 'string', default: '8' },
    image: {
      type: 'string',
      default: process.env.AI_TOOLBELT_SANDBOX_IMAGE ?? DEFAULT_SANDBOX_IMAGE,
    },
  },
});
const runs = Number(values.runs);
const seconds = Number(values.seconds);
const image = values.image!;
const socket = '/var/run/docker2.sock';
const pidfile = '/var/run/docker2.pid';
const certPath = '/etc/ai-toolbelt/docker2/client';
const script = new URL('../scripts/setup-sandbox-host.sh', import.meta.url).pathname;

function startEngine2(): void {
  const result = spawnSync(
    'bash',
    [script, '--name', 'docker2', '--listen', '127.0.0.1:2376', '--skip-base'],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, AI_TOOLBELT_SANDBOX_IMAGE: image },
    },
  );
  if (result.status !== 0) throw new Error('could not start engine 2 (see above)');
}

/** kill -9 of engine 2's dockerd; resolves with the time of the signal once it is gone. */
async function killEngine2(): Promise<number> {
  const pid = Number(readFileSync(pidfile, 'utf8'));
  process.kill(pid, 'SIGKILL');
  const killedAt = performance.now();
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return killedAt;
    }
    await new Promise(resolve => setTimeout(resolve, 10));
  }
}

const percentile = (xs: number[], p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
};
const round = (x: number): number => Math.round(x * 10) / 10;
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

/**
 * Warm p50 of `print(1)` on engine 2 over its unix socket and over TCP + mutual TLS, with the
 * pools refilled between runs (a pool hit every time). The two are measured alternately, so
 * load from elsewhere on the machine hits both alike.
 */
async function warmP50s(): Promise<{ local: number; tls: number }> {
  await using local = await DockerSandbox.create({
    engines: [`unix://${socket}`],
    image,
    warmPoolSize: 2,
    preimport: [],
  });
  await using tls = await DockerSandbox.create({
    engines: [{ url: 'tcp://127.0.0.1:2376', certPath }],
    image,
    warmPoolSize: 2,
    preimport: [],
  });
  const times = { local: [] as number[], tls: [] as number[] };
  for (let i = 0; i < runs; i++) {
    const order = i % 2 === 0 ? (['local', 'tls'] as const) : (['tls', 'local'] as const);
    for (const which of order) {
      const sandbox = which === 'local' ? local : tls;
      await sandbox.waitForCleanup();
      while (local.warmCount < 2 || tls.warmCount < 2) await sleep(20);
      const started = performance.now();
      const result = await sandbox.execute('print(1)');
      if (result.stdout !== '1\n') throw new Error(`unexpected result ${JSON.stringify(result)}`);
      times[which].push(performance.now() - started);
    }
  }
  return { local: percentile(times.local, 0.5), tls: percentile(times.tls, 0.5) };
}

async function failover(): Promise<Record<string, number>> {
  const main = recordingDocker();
  const read = (file: string) => readFileSync(`${certPath}/${file}`);
  const second = recordingDocker({
    host: '127.0.0.1',
    port: 2376,
    protocol: 'https',
    ...{ ca: read('ca.pem'), cert: read('cert.pem'), key: read('key.pem') },
  });
  const sandbox = await DockerSandbox.create({
    engines: [
      { docker: main.docker, name: 'main' },
      { docker: second.docker, name: 'engine2' },
    ],
    image,
    warmPoolSize: 4,
    maxConcurrentExecutions: 4,
    healthCheckIntervalMs: 1_000,
    preimport: [],
  });
  let killedAt = Number.POSITIVE_INFINITY;
  let firstSuccessAfterKill = Number.POSITIVE_INFINITY;
  let total = 0;
  let lost = 0;
  const stopAt = () => killedAt + seconds * 1000;
  const callers = Array.from({ length: 4 }, async (_, caller) => {
    for (let i = 0; performance.now() < stopAt(); i++) {
      const submitted = performance.now();
      total++;
      try {
        const result = await sandbox.execute(
          `import time\ntime.sleep(0.3)\nprint("${caller}-${i}")`,
          { timeoutMs: 60_000 },
        );
        if (result.status !== 'success') throw new Error(`unexpected ${result.status}`);
        if (submitted > killedAt)
          firstSuccessAfterKill = Math.min(firstSuccessAfterKill, performance.now());
      } catch (error) {
        if (!(error instanceof Error) || !/Sandbox|Docker/.test(error.name)) throw error;
        lost++;
      }
    }
  });
  await sleep(seconds * 1000);
  killedAt = await killEngine2();
  while (sandbox.engineStatus()[1]!.state === 'up') await sleep(5);
  const detectMs = performance.now() - killedAt;
  await Promise.all(callers);
  const restarting = performance.now();
  startEngine2();
  const restarted = performance.now();
  while (sandbox.engineStatus()[1]!.state !== 'up') await sleep(20);
  const readmitMs = performance.now() - restarted;
  await sandbox.close();
  const sent = [...main.sent, ...second.sent];
  const duplicateRuns = sent.length - new Set(sent).size;
  const instanceId = sandbox.instanceId;
  const leaked =
    (await listSandboxContainers({ docker: new Docker(), instanceId })).length +
    (await listSandboxContainers({ docker: new Docker({ socketPath: socket }), instanceId }))
      .length;
  return {
    engines: 2,
    failoverMs: Math.round(firstSuccessAfterKill - killedAt),
    detectMs: Math.round(detectMs),
    lostRuns: lost,
    duplicateRuns,
    leaked,
    runs: total,
    restartMs: Math.round(restarted - restarting),
    readmitMs: Math.round(readmitMs),
  };
}

const local = new Docker({ socketPath: socket });
const ready = await local.ping().then(
  () => true,
  () => false,
);
if (!ready) startEngine2();
const results = benchResults({
  name: 'fleet',
  command: 'npm run bench:fleet',
  docker: new Docker(),
  notes: ['two engines on one machine: the host dockerd and docker2 over TCP + mutual TLS'],
});
const { local: localP50, tls: tlsP50 } = await warmP50s();
results.row({
  engine: 'tcp-tls',
  warmP50Ms: round(tlsP50),
  localWarmP50Ms: round(localP50),
  warmOverLocal: Math.round((tlsP50 / localP50) * 1000) / 1000,
  runs,
});
results.row(await failover());
await results.save();
