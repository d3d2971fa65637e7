// What the egress allow-list costs (src/sandbox/egress/), on the real engine (Docker + gVisor,
// runtime runsc-egress). Every target is this bench's own server on 127.0.0.1, reached by names
// only the bench's resolver knows (rules with privateAddresses: true); nothing aims at an
// address outside this machine. Cases:
// - start: a cold one-shot `print(1)` (no warm pool, pre-imports off) in a sandbox with an egress
//   policy against one without, alternating run by run: what a user pays per container for the
//   proxy, its socket, the forwarder and the egress runtime;
// - pip: a one-shot `%pip install` of a small pure-Python wheel from the bench's own package
//   index (test/helpers/package-index.ts), against the same code without the pip line, in the
//   same sandbox, alternating;
// - throughput: a 64 MiB body from a local HTTP server fetched by the host through an
//   EgressProxy of its own (absolute-form GET on its Unix socket) against the host fetching it
//   directly, alternating (the proxy's overhead); and fetched inside the sandbox with urllib
//   through the forwarder and the container's proxy, timed by the code itself (bytes discarded);
// - leaked: containers of this process left after every sandbox is closed, and proxy socket
//   directories left behind.
// Usage: node bench/egress.ts [--runs 10] [--pip-runs 5] [--fetches 9] [--image IMAGE]
//   (writes bench/results/egress.json)
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { type RequestOptions, type Server, createServer, get as httpGet } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import { listSandboxContainers } from '../src/internal.ts';
import { EgressProxy } from '../src/sandbox/egress/egress-proxy.ts';
import { resolveEgressOptions } from '../src/sandbox/egress/egress-options.ts';
import { DEFAULT_SANDBOX_IMAGE, DockerSandbox, type EgressOptions } from '../src/sandbox/index.ts';
import { buildWheel, servePackageIndex, sha256Of } from '../test/helpers/package-index.ts';
import { benchResults } from './bench-results.ts';
import { coldOnce, percentile, round } from './sandbox-cases.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10' },
    'pip-runs': { type: 'string', default: '5' },
    fetches: { type: 'string', default: '9' },
    image: {
      type: 'string',
      default: process.env.AI_TOOLBELT_SANDBOX_IMAGE ?? DEFAULT_SANDBOX_IMAGE,
    },
  },
});
const runs = Number(values.runs);
const pipRuns = Number(values['pip-runs']);
const fetches = Number(values.fetches);
const image = values.image;
const docker = new Docker();
const MiB = 1024 * 1024;
const BODY_BYTES = 64 * MiB;
const ratio = (x: number): number => Math.round(x * 1000) / 1000;
const p50 = (xs: number[]) => percentile(xs, 0.5);
const p90 = (xs: number[]) => percentile(xs, 0.9);
// Alternating which goes first, so neither always follows the other.
const order = <T>(i: number, [a, b]: readonly [T, T]): readonly [T, T] =>
  i % 2 === 0 ? [a, b] : [b, a];

const results = benchResults({
  name: 'egress',
  command: 'npm run bench:egress',
  docker,
  notes: [
    'every target is the bench’s own server on 127.0.0.1, reached by names only its resolver knows',
    'start: cold one-shot print(1), no warm pool, pre-imports off; egress and plain alternate run by run',
    'pip: one-shot `%pip install` of a 1-module wheel from a local index against the same code without the pip line (`import sys`), same sandbox, alternating',
    'throughput: a 64 MiB body; host through its own EgressProxy (Unix socket) and host direct alternate; in-sandbox urllib through the forwarder and proxy, timed by the code; p50 of the fetches',
  ],
});

/** A server on 127.0.0.1 answering every GET with BODY_BYTES bytes (1 MiB chunks, backpressure kept). */
async function serveBody(): Promise<{ server: Server; port: number }> {
  const chunk = Buffer.alloc(MiB, 0x61);
  const server = createServer((_request, response) => {
    response.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': BODY_BYTES,
    });
    let sent = 0;
    const pump = () => {
      while (sent < BODY_BYTES) {
        sent += chunk.length;
        if (!response.write(chunk)) return void response.once('drain', pump);
      }
      response.end();
    };
    pump();
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** GETs `options` and discards the body: the bytes and MiB/s (request to last byte). */
function fetchDiscard(options: RequestOptions): Promise<{ bytes: number; mibPerSec: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = httpGet(options, response => {
      if (response.statusCode !== 200) {
        response.resume();
        return reject(new Error(`status ${response.statusCode}`));
      }
      let bytes = 0;
      response.on('data', (data: Buffer) => (bytes += data.length));
      response.on('error', reject);
      response.on('end', () => {
        const seconds = (performance.now() - started) / 1000;
        resolve({ bytes, mibPerSec: bytes / MiB / seconds });
      });
    });
    request.on('error', reject);
  });
}

async function closeServer(server: Server | undefined): Promise<void> {
  if (server === undefined) return;
  server.closeAllConnections();
  await new Promise(resolve => server.close(resolve));
}

const scratch = mkdtempSync(join(tmpdir(), 'aitb-bench-egress-'));
const wheels = join(scratch, 'wheels');
const socketDir = join(scratch, 'sockets');
let index: { server: Server; port: number } | undefined;
let body: { server: Server; port: number } | undefined;
let hostProxy: EgressProxy | undefined;
let plain: DockerSandbox | undefined;
let egressed: DockerSandbox | undefined;
const benchStarted = performance.now();
try {
  // The package index: one pure-Python wheel.
  mkdirSync(wheels);
  const wheel = buildWheel(wheels, { module: 'atb_bench', version: '1.0', value: 7 });
  index = await servePackageIndex({
    dir: wheels,
    pages: {
      '/simple/atb-bench/': `<a href="../../files/${wheel}#sha256=${sha256Of(wheels, wheel)}">${wheel}</a>`,
    },
    files: [wheel],
  });
  body = await serveBody();
  const names: Record<string, string> = { 'packages.test': '127.0.0.1', 'blob.test': '127.0.0.1' };
  const resolve = async (host: string): Promise<readonly string[]> => {
    const address = names[host];
    if (address === undefined) throw Object.assign(new Error('unknown'), { code: 'ENOTFOUND' });
    return [address];
  };
  const blobUrl = `http://blob.test:${body.port}/blob`;
  const egress: EgressOptions = {
    allow: [
      { host: 'packages.test', ports: [index.port], privateAddresses: true },
      { host: 'blob.test', ports: [body.port], privateAddresses: true },
    ],
    pythonIndexUrl: `http://packages.test:${index.port}/simple`,
    resolve,
    socketDir,
    // Room for the 64 MiB body with headers to spare (one fetch per run; the host proxy's count
    // is taken after each fetch).
    maxBytesPerRun: 4 * BODY_BYTES,
  };

  // --- start -------------------------------------------------------------------------------
  const base = { docker, image, warmPoolSize: 0, preimport: [] as string[] };
  plain = await DockerSandbox.create(base);
  egressed = await DockerSandbox.create({ ...base, egress });
  const sandboxes = { plain, egress: egressed };
  const cold = { plain: [] as number[], egress: [] as number[] };
  const kinds = ['plain', 'egress'] as const;
  for (const kind of kinds) await coldOnce(sandboxes[kind]); // image and page-cache warm-up
  for (let i = 0; i < runs; i++) {
    for (const kind of order(i, kinds))
      cold[kind].push((await coldOnce(sandboxes[kind])).toResultMs);
  }
  results.row({
    case: 'start',
    snippet: 'print(1)',
    plainRuntime: plain.runtime ?? '?',
    egressRuntime: resolveEgressOptions(egress).runtime,
    runs,
    plainP50Ms: round(p50(cold.plain)),
    plainP90Ms: round(p90(cold.plain)),
    egressP50Ms: round(p50(cold.egress)),
    egressP90Ms: round(p90(cold.egress)),
    egressOverPlain: ratio(p50(cold.egress) / p50(cold.plain)),
    extraP50Ms: round(p50(cold.egress) - p50(cold.plain)),
  });
  await plain.close();
  plain = undefined;

  // --- pip ---------------------------------------------------------------------------------
  const pipCode = '%pip install atb-bench\nimport sys';
  const baseCode = 'import sys';
  const pip = { install: [] as number[], baseline: [] as number[] };
  const pipCases = ['install', 'baseline'] as const;
  for (let i = 0; i < pipRuns; i++) {
    for (const kind of order(i, pipCases)) {
      await egressed.waitForCleanup();
      const started = performance.now();
      const result = await egressed.execute(kind === 'install' ? pipCode : baseCode, {
        timeoutMs: 120_000,
      });
      const ms = performance.now() - started;
      if (result.status !== 'success') {
        throw new Error(`pip case ${kind}: ${JSON.stringify(result)}`);
      }
      if (kind === 'install' && !result.stdout.includes('Successfully installed atb-bench-1.0')) {
        throw new Error(`pip did not install: ${JSON.stringify(result)}`);
      }
      pip[kind].push(ms);
    }
  }
  results.row({
    case: 'pip',
    snippet: pipCode,
    baseline: baseCode,
    runs: pipRuns,
    installP50Ms: round(p50(pip.install)),
    installP90Ms: round(p90(pip.install)),
    baselineP50Ms: round(p50(pip.baseline)),
    baselineP90Ms: round(p90(pip.baseline)),
    installOverBaseline: ratio(p50(pip.install) / p50(pip.baseline)),
    pipP50Ms: round(p50(pip.install) - p50(pip.baseline)),
  });

  // --- throughput --------------------------------------------------------------------------
  const proxyPath = join(scratch, 'host-proxy.sock');
  hostProxy = await EgressProxy.listen({
    egress: resolveEgressOptions({ ...egress, socketDir: scratch }),
    path: proxyPath,
  });
  const proxy = hostProxy;
  const port = body.port;
  const via = {
    proxy: () =>
      fetchDiscard({
        socketPath: proxyPath,
        path: blobUrl,
        headers: { host: `blob.test:${port}` },
        agent: false,
      }),
    direct: () => fetchDiscard({ host: '127.0.0.1', port, path: '/blob', agent: false }),
  };
  const rate = { proxy: [] as number[], direct: [] as number[], sandbox: [] as number[] };
  const hostCases = ['proxy', 'direct'] as const;
  const check = (bytes: number, what: string) => {
    if (bytes !== BODY_BYTES) throw new Error(`${what}: ${bytes} bytes, not ${BODY_BYTES}`);
  };
  for (const kind of hostCases) check((await via[kind]()).bytes, kind); // warm-up
  proxy.takeUsage();
  const fetchCode = `
import json, time, urllib.request
buffer = bytearray(1 << 20)
started = time.perf_counter()
got = 0
with urllib.request.urlopen(${JSON.stringify(blobUrl)}, timeout=60) as response:
    while True:
        n = response.readinto(buffer)
        if not n:
            break
        got += n
seconds = time.perf_counter() - started
print(json.dumps({"bytes": got, "seconds": seconds}))
`;
  let sandboxReceived = 0;
  for (let i = 0; i < fetches; i++) {
    for (const kind of order(i, hostCases)) {
      const { bytes, mibPerSec } = await via[kind]();
      check(bytes, kind);
      rate[kind].push(mibPerSec);
      if (kind === 'proxy') proxy.takeUsage(); // the host proxy's byte count starts afresh
    }
    await egressed.waitForCleanup();
    const result = await egressed.execute(fetchCode, { timeoutMs: 120_000 });
    if (result.status !== 'success') throw new Error(`sandbox fetch: ${JSON.stringify(result)}`);
    const seen = JSON.parse(result.stdout) as { bytes: number; seconds: number };
    check(seen.bytes, 'sandbox');
    rate.sandbox.push(seen.bytes / MiB / seen.seconds);
    sandboxReceived = result.network?.bytesReceived ?? 0;
  }
  const mibs = (xs: number[]) => round(p50(xs));
  results.row({
    case: 'throughput',
    bodyMiB: BODY_BYTES / MiB,
    fetches,
    hostDirectMiBPerSec: mibs(rate.direct),
    hostProxyMiBPerSec: mibs(rate.proxy),
    proxyOverDirect: ratio(p50(rate.proxy) / p50(rate.direct)),
    sandboxMiBPerSec: mibs(rate.sandbox),
    sandboxOverHostProxy: ratio(p50(rate.sandbox) / p50(rate.proxy)),
    // What the container's proxy counted as received for the last in-sandbox fetch.
    sandboxProxyBytesReceived: sandboxReceived,
    perFetch: Object.fromEntries(
      Object.entries(rate).map(([key, xs]) => [key, xs.map(x => Math.round(x))]),
    ),
  });
  await egressed.close();
  egressed = undefined;
  results.row({
    case: 'leaked',
    leaked: (await listSandboxContainers({ docker, pid: process.pid })).length,
    socketDirsLeft: readdirSync(socketDir).length,
    benchSeconds: Math.round((performance.now() - benchStarted) / 1000),
  });
  await results.save();
} finally {
  await plain?.close().catch(() => {});
  await egressed?.close().catch(() => {});
  await hostProxy?.close().catch(() => {});
  await closeServer(index?.server);
  await closeServer(body?.server);
  rmSync(scratch, { recursive: true, force: true });
}
const leaked = await listSandboxContainers({ docker, pid: process.pid });
if (leaked.length > 0) {
  console.error(`leaked containers: ${leaked.map(info => info.Id.slice(0, 12)).join(' ')}`);
  process.exitCode = 1;
}
