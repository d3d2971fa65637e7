// The egress allow-list on the real engine (Docker + gVisor, runtime runsc-egress): pip installs
// from the test's own package index through the host-side proxy, and everything else the code
// tries is refused. Every target is this test's own server on loopback, reached by names that
// only the test's resolver knows; nothing here ever aims at an address outside this machine.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStorage } from 'unstorage';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/errors/invalid-argument-error.ts';
import { DockerSandbox, type EgressOptions } from '../../../src/sandbox/index.ts';
import { buildWheel, servePackageIndex, sha256Of } from '../../helpers/package-index.ts';
import { type OtelHarness, installOtel } from '../../telemetry/otel-harness.ts';
import {
  SANDBOX_IMAGE,
  describeSandbox,
  docker,
  expectNoLeakedContainers,
} from '../sandbox-availability.ts';

describeSandbox('egress: an allow-listed package index, nothing else', () => {
  let dir: string;
  let socketDir: string;
  let index: { server: Server; port: number; requests: string[] };
  let second: { server: Server; port: number; requests: string[] };
  let sandbox: DockerSandbox;
  let egress: EgressOptions;
  let otel: OtelHarness;
  const hostAddresses = Object.values(networkInterfaces())
    .flat()
    .filter(found => found !== undefined && !found.internal && found.family === 'IPv4')
    .map(found => found!.address);

  beforeAll(async () => {
    otel = installOtel();
    dir = mkdtempSync(join(tmpdir(), 'atb-egress-index-'));
    socketDir = mkdtempSync(join(tmpdir(), 'atb-egress-sockets-'));
    const wheel = buildWheel(dir, { module: 'atb_egress', version: '1.0', value: 42 });
    second = await servePackageIndex({ dir, pages: {}, files: [] });
    index = await servePackageIndex({
      dir,
      pages: {
        '/simple/atb-egress/': `<a href="../../files/${wheel}#sha256=${sha256Of(dir, wheel)}">${wheel}</a>`,
      },
      files: [wheel],
      // The allowed index sends one project to the server that is not on the list.
      fallback: (request, response) => {
        if (request.url !== '/simple/atb-moved/') return false;
        response.writeHead(302, {
          location: `http://second.test:${second.port}/simple/atb-moved/`,
        });
        response.end();
        return true;
      },
    });
    const names: Record<string, string> = {
      'packages.test': '127.0.0.1',
      'second.test': '127.0.0.1',
      'sneaky.test': '127.0.0.1',
    };
    egress = {
      allow: [
        { host: 'packages.test', ports: [index.port], privateAddresses: true },
        // Allowed by name, but it resolves to loopback and its rule does not allow that.
        `sneaky.test:${second.port}`,
      ],
      pythonIndexUrl: `http://packages.test:${index.port}/simple`,
      resolve: async host => {
        if (names[host] === undefined)
          throw Object.assign(new Error('unknown'), { code: 'ENOTFOUND' });
        return [names[host]];
      },
      socketDir,
    };
    sandbox = await DockerSandbox.create({
      docker,
      image: SANDBOX_IMAGE,
      warmPoolSize: 0,
      preimport: [],
      tmpfsMiB: 64,
      egress,
    });
  });

  afterAll(async () => {
    await sandbox?.close();
    // Every proxy is gone with its container, and its socket's directory with it.
    if (socketDir) expect(readdirSync(socketDir)).toEqual([]);
    await expectNoLeakedContainers();
    for (const { server } of [index, second]) {
      server?.closeAllConnections();
      await new Promise(resolve => server?.close(resolve));
    }
    rmSync(dir, { recursive: true, force: true });
    rmSync(socketDir, { recursive: true, force: true });
    await otel?.uninstall();
  });

  it('pip installs from the allowed index in a conversation; the next cell imports it, and a restored interpreter installs it again', async () => {
    const conversation = { id: 'egress-pip', userId: 'alice' };
    const install = await sandbox.executeCell('%pip install atb-egress', {
      conversation,
      timeoutMs: 60_000,
    });
    expect(install.status, install.stderr + install.stdout).toBe('success');
    expect(install.stdout).toContain('Successfully installed atb-egress-1.0');
    expect(install.network?.hosts).toEqual([`packages.test:${index.port}`]);
    expect(install.network?.connections).toBeGreaterThanOrEqual(1);
    expect(install.network?.refused).toEqual([]);
    expect(install.notes.join('\n')).toMatch(/^Network: \d+ connections? \(packages\.test:/m);

    const used = await sandbox.executeCell('import atb_egress\nprint(atb_egress.VALUE)', {
      conversation,
    });
    expect(used).toMatchObject({ status: 'success', stdout: '42\n' });
    expect(used.network).toMatchObject({ connections: 0, refusedCount: 0 });

    // The interpreter is lost; the replay of the kept cells runs the install again.
    const containers = await docker.listContainers({
      filters: { label: ['ai-toolbelt.sandbox.kind=conversation'] },
    });
    for (const found of containers)
      await docker
        .getContainer(found.Id)
        .kill()
        .catch(() => {});
    const restored = await sandbox.executeCell('print(atb_egress.VALUE + 1)', {
      conversation,
      timeoutMs: 60_000,
    });
    expect(restored).toMatchObject({ status: 'success', stdout: '43\n' });
    expect(restored.restored?.cells).toBe(2);
    expect(
      index.requests.filter(url => url === '/simple/atb-egress/').length,
    ).toBeGreaterThanOrEqual(2);
  }, 180_000);

  it("refuses the server off the list, loopback, the host's own addresses, a name mapped to loopback and a redirect, with notes", async () => {
    const targets = [
      `http://second.test:${second.port}/`,
      `http://127.0.0.1:${index.port}/simple/`,
      `http://localhost:${index.port}/simple/`,
      `http://sneaky.test:${second.port}/`,
      ...hostAddresses.map(address => `http://${address}:${index.port}/simple/`),
    ];
    const code = `
import json, os, subprocess, sys, urllib.request, urllib.error
# Code that aims at loopback through the proxy on purpose (NO_PROXY would keep it off the proxy).
for name in ("NO_PROXY", "no_proxy"):
    os.environ.pop(name, None)
out = {}
for url in ${JSON.stringify(targets)}:
    try:
        urllib.request.urlopen(url, timeout=10)
        out[url] = "reached"
    except urllib.error.HTTPError as error:
        out[url] = error.code
    except Exception as error:
        out[url] = type(error).__name__
pip = subprocess.run([sys.executable, "-m", "pip", "install", "atb-moved"], capture_output=True, text=True)
out["pip"] = pip.returncode
print(json.dumps(out))
`;
    otel.reset();
    const result = await sandbox.execute(code, { timeoutMs: 60_000 });
    expect(result.status, result.stderr).toBe('success');
    const seen = JSON.parse(result.stdout) as Record<string, unknown>;
    for (const url of targets) expect(seen[url], url).toBe(403);
    // Each refusal is an event of the run's span, and counted.
    const run = (await otel.spans()).find(span => span.name === 'ai_toolbelt.sandbox.run')!;
    expect(run.events.map(event => event.attributes)).toContainEqual({
      'ai_toolbelt.sandbox.egress.host': 'second.test',
      'ai_toolbelt.sandbox.egress.port': second.port,
      'ai_toolbelt.sandbox.egress.reason': 'not-allowed',
    });
    expect(run.attributes['ai_toolbelt.sandbox.egress.refused']).toBe(result.network!.refusedCount);
    const counted = (await otel.metrics()).get('ai_toolbelt.sandbox.egress.refusals') ?? [];
    expect(counted).toContainEqual({
      value: expect.any(Number),
      attributes: { 'ai_toolbelt.sandbox.egress.reason': 'private-address' },
    });
    expect(seen.pip).not.toBe(0);
    // The redirect was answered by the index, and its target was never reached.
    expect(index.requests).toContain('/simple/atb-moved/');
    expect(second.requests).toEqual([]);
    const refused = result.network!.refused.map(r => `${r.host}:${r.port} ${r.reason}`);
    expect(refused).toEqual(
      expect.arrayContaining([
        `second.test:${second.port} not-allowed`,
        `127.0.0.1:${index.port} not-allowed`,
        `localhost:${index.port} not-allowed`,
        `sneaky.test:${second.port} private-address`,
        ...hostAddresses.map(address => `${address}:${index.port} not-allowed`),
      ]),
    );
    expect(result.notes).toContain(
      `Network: refused sneaky.test:${second.port}: resolves to 127.0.0.1, a loopback address (a rule { host: "sneaky.test", privateAddresses: true } allows it).`,
    );
  }, 120_000);

  it('leaves no other way out: no DNS, no route, no other port, no engine socket, only its own proxy socket', async () => {
    const hosts = JSON.stringify(hostAddresses);
    const code = `
import json, os, socket
out = {}
def attempt(name, fn):
    try:
        fn()
        out[name] = "reached"
    except Exception as error:
        out[name] = type(error).__name__
def tcp(host, port):
    s = socket.create_connection((host, port), timeout=5)
    s.close()
def unix(path):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(path)
attempt("dns", lambda: socket.getaddrinfo("packages.test", 80))
attempt("index direct", lambda: tcp("127.0.0.1", ${index.port}))
attempt("forwarder other port", lambda: tcp("127.0.0.1", 3129))
for address in ${hosts}:
    attempt("host " + address, lambda: tcp(address, ${index.port}))
    attempt("engine tcp " + address, lambda: tcp(address, 2375))
attempt("engine socket", lambda: unix("/var/run/docker.sock"))
attempt("host socket dir", lambda: os.listdir(${JSON.stringify(socketDir)}))
out["mounted"] = sorted(os.listdir("/run/ai-toolbelt-egress"))
print(json.dumps(out))
`;
    const result = await sandbox.execute(code, { timeoutMs: 60_000 });
    expect(result.status, result.stderr).toBe('success');
    const seen = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(seen.mounted).toEqual(['proxy.sock']);
    for (const [name, outcome] of Object.entries(seen)) {
      if (name !== 'mounted') expect(outcome, name).not.toBe('reached');
    }
    expect(seen.dns).toBe('gaierror');
    expect(seen['engine socket']).toBe('FileNotFoundError');
  }, 120_000);

  it("reaches the code's own server on its loopback directly, not through the proxy", async () => {
    const result = await sandbox.execute(`
import http.server, threading, urllib.request
server = http.server.HTTPServer(("127.0.0.1", 8000), http.server.SimpleHTTPRequestHandler)
threading.Thread(target=server.serve_forever, daemon=True).start()
print(urllib.request.urlopen("http://127.0.0.1:8000/", timeout=10).status)
`);
    expect(result.status, result.stderr).toBe('success');
    expect(result.stdout).toBe('200\n');
    expect(result.network).toMatchObject({ connections: 0, refusedCount: 0 });
  });

  it('a replica serving an interpreter another replica started takes its proxy over once that one is gone', async () => {
    const replicaSockets = mkdtempSync(join(tmpdir(), 'atb-egress-replicas-'));
    const options = {
      docker,
      image: SANDBOX_IMAGE,
      warmPoolSize: 0,
      preimport: [],
      egress: { ...egress, socketDir: replicaSockets },
      conversations: {
        store: createStorage(),
        encryptionKey: 'egress-replica-key-0123456789abcdef',
        warmPoolSize: 0,
      },
    };
    const a = await DockerSandbox.create(options);
    const b = await DockerSandbox.create(options);
    try {
      const conversation = { id: 'egress-replicas', userId: 'bob' };
      const install = await a.executeCell('%pip install atb-egress', {
        conversation,
        timeoutMs: 60_000,
      });
      expect(install.network?.connections).toBeGreaterThanOrEqual(1);
      // A still serves the proxy: B uses it as it is, and has no usage to report.
      const fromB = await b.executeCell('import atb_egress\nprint(atb_egress.VALUE)', {
        conversation,
      });
      expect(fromB).toMatchObject({ stdout: '42\n' });
      expect(fromB.network).toBeUndefined();
      await a.close();
      const fetch = await b.executeCell(
        `import urllib.request\nprint(urllib.request.urlopen("http://packages.test:${index.port}/simple/atb-egress/", timeout=20).status)`,
        { conversation },
      );
      expect(fetch.restored).toBeUndefined();
      expect(fetch).toMatchObject({ status: 'success', stdout: '200\n' });
      expect(fetch.network).toMatchObject({
        connections: 1,
        hosts: [`packages.test:${index.port}`],
      });
    } finally {
      await a.close();
      await b.close();
    }
    // B removed the interpreter: the proxy it took over went with it, and its directory.
    expect(readdirSync(replicaSockets)).toEqual([]);
    rmSync(replicaSockets, { recursive: true, force: true });
  }, 180_000);

  it('refuses engines it cannot mount a socket into', () => {
    expect(
      () =>
        new DockerSandbox({
          engines: ['tcp://127.0.0.1:1'],
          allowInsecureTcp: true,
          egress: { allow: ['packages.test'] },
        }),
    ).toThrow(InvalidArgumentError);
  });
});

describeSandbox('egress: without a policy', () => {
  it('reaches nothing: no proxy settings, no socket, no network use reported, the plain runtime', async () => {
    await using sandbox = await DockerSandbox.create({ docker, warmPoolSize: 0, preimport: [] });
    const result = await sandbox.execute(`
import json, os, socket
out = {"proxy": os.environ.get("HTTPS_PROXY"), "mounted": os.path.exists("/run/ai-toolbelt-egress")}
try:
    socket.create_connection(("127.0.0.1", 3128), timeout=5)
    out["forwarder"] = "reached"
except Exception as error:
    out["forwarder"] = type(error).__name__
print(json.dumps(out))
`);
    expect(result.status, result.stderr).toBe('success');
    expect(JSON.parse(result.stdout)).toEqual({
      proxy: null,
      mounted: false,
      forwarder: 'ConnectionRefusedError',
    });
    expect(result.network).toBeUndefined();
    expect(result.notes).toEqual([]);
    expect(sandbox.runtime).toBe('runsc');
  });
});
