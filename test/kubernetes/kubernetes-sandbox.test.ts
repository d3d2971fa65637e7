import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  DockerSandbox,
  SandboxUnavailableError,
  type DockerSandboxOptions,
} from '../../src/sandbox/index.ts';
import { SANDBOX_IMAGE, describeKubernetes, kubectl } from './cluster.ts';
import { type SandboxNamespace, createSandboxNamespace } from './sandbox-namespace.ts';

// One-shot runs on the Kubernetes engine, as the app's service account with the documented Role:
// the hardened pod, the hostile cases of the Docker engine's suite that apply to a pod, and no
// pod left after close().
let ns: SandboxNamespace;
let sandbox: DockerSandbox;

function options(): DockerSandboxOptions {
  return {
    engines: [ns.engine()],
    image: SANDBOX_IMAGE,
    warmPoolSize: 1,
    preimport: [],
  };
}

describeKubernetes('Kubernetes engine: one-shot runs in hardened gVisor pods', () => {
  beforeAll(async () => {
    ns = await createSandboxNamespace();
    sandbox = await DockerSandbox.create(options());
  }, 120_000);

  afterAll(async () => {
    await sandbox?.close();
    await ns?.remove();
  }, 180_000);

  it('makes each pod hardened: gVisor, non-root, read-only root, no token, a memory /tmp, a deadline', async () => {
    let name = '';
    const deadline = Date.now() + 60_000;
    while (name === '' && Date.now() < deadline) {
      name = (await ns.pods()).find(pod => pod.phase === 'Running')?.name ?? '';
      if (name === '') await new Promise(resolve => setTimeout(resolve, 200));
    }
    const pod = JSON.parse(await kubectl(['get', 'pod', name, '-n', ns.namespace, '-o', 'json']));
    const { spec } = pod;
    const [container] = spec.containers;
    expect(spec).toMatchObject({
      runtimeClassName: 'gvisor',
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      securityContext: {
        runAsUser: 65534,
        runAsGroup: 65534,
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      volumes: [{ name: 'tmp', emptyDir: { medium: 'Memory', sizeLimit: '32Mi' } }],
    });
    // A warm pod may idle warmMaxAgeMs, then run maxTimeoutMs: its TTL, kept by the server too.
    expect(spec.activeDeadlineSeconds).toBe((300_000 + 300_000 + 60_000) / 1000);
    expect(container.securityContext).toEqual({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      privileged: false,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(container.resources).toEqual({
      limits: { cpu: '1', memory: String(256 * 1024 * 1024) },
      requests: { cpu: '100m', memory: String(256 * 1024 * 1024) },
    });
    expect(pod.metadata.labels).toMatchObject({
      'ai-toolbelt.sandbox': '1',
      'ai-toolbelt.sandbox.instance': sandbox.instanceId,
      'ai-toolbelt.sandbox.kind': 'execute',
    });
  }, 90_000);

  it('runs Python under gVisor as uid 65534, with no capabilities, token or network', async () => {
    const code = [
      'import os, socket',
      'print(os.uname().release)',
      'print(os.getuid(), os.getgid())',
      'status = dict(l.split(":", 1) for l in open("/proc/self/status"))',
      'print(status["CapEff"].strip())',
      'print(os.path.exists("/var/run/secrets/kubernetes.io"))',
      'print([name for _, name in socket.if_nameindex()])',
    ].join('\n');
    const result = await sandbox.execute(code, { timeoutMs: 30_000 });
    expect(result.status, result.stderr).toBe('success');
    expect(result.stdout.split('\n')).toEqual([
      '4.4.0',
      '65534 65534',
      '0000000000000000',
      'False',
      "['lo']",
      '',
    ]);
  }, 60_000);

  it('takes files in and gives files, stderr and exit codes back, as on Docker', async () => {
    const result = await sandbox.execute(
      'import sys\nprint(open("/tmp/in/a.txt").read())\nopen("/tmp/outputs/b.csv", "w").write("x,y\\n1,2\\n")\n' +
        'print("warned", file=sys.stderr)\nraise SystemExit(3)',
      { timeoutMs: 30_000, files: [{ path: 'in/a.txt', data: 'hello' }] },
    );
    expect(result).toMatchObject({ status: 'error', exitCode: 3, stdout: 'hello\n' });
    expect(result.stderr).toBe('warned\n');
    expect(result.files.map(file => [file.path, Buffer.from(file.data).toString()])).toEqual([
      ['outputs/b.csv', 'x,y\n1,2\n'],
    ]);
  }, 60_000);

  it('stops a memory bomb at the memory limit (oom)', async () => {
    const result = await sandbox.execute('b = []\nwhile True:\n    b.append(bytearray(10**7))', {
      timeoutMs: 30_000,
    });
    expect(result).toMatchObject({ status: 'oom', exitCode: 137 });
  }, 60_000);

  it('contains a fork bomb (gVisor ends the sandbox) and keeps working afterwards', async () => {
    const result = await sandbox.execute('import os\nwhile True:\n    os.fork()', {
      timeoutMs: 30_000,
    });
    expect(['crashed', 'error']).toContain(result.status);
    const after = await sandbox.execute('print("still fine")', { timeoutMs: 30_000 });
    expect(after).toMatchObject({ status: 'success', stdout: 'still fine\n' });
  }, 90_000);

  it('cuts a 100 MB print at the cap over the attach stream, with host memory bounded', async () => {
    const rssBefore = process.memoryUsage().rss;
    const result = await sandbox.execute(
      'import sys\nsys.stdout.write("x" * (100 * 1024 * 1024))\nprint("never seen")',
      { timeoutMs: 30_000 },
    );
    expect(result).toMatchObject({ status: 'output-limit', exitCode: null, truncated: true });
    expect(result.stdout.length).toBe(1024 * 1024);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
  }, 60_000);

  it('cannot write outside /tmp, fill /tmp past its size, or become root', async () => {
    const [root, full, setuid] = await Promise.all([
      sandbox.execute('open("/usr/evil", "w").write("x")', { timeoutMs: 30_000 }),
      sandbox.execute(
        'f = open("/tmp/big", "wb")\nfor _ in range(64):\n    f.write(b"x" * 1024 * 1024)\nf.flush()',
        { timeoutMs: 30_000 },
      ),
      sandbox.execute('import os\nos.setuid(0)', { timeoutMs: 30_000 }),
    ]);
    expect(root.stderr).toMatch(/PermissionError|Read-only file system/);
    expect(full.stderr).toContain('No space left on device');
    expect(setuid.stderr).toContain('PermissionError: [Errno 1] Operation not permitted');
  }, 90_000);

  it('kills `while True: pass` at the timeout, and its pod is deleted', async () => {
    // HOSTNAME is the pod's name (gethostname() may be empty: under gVisor, the pod's own
    // sandbox has the host name, and the container's sandbox is another one here).
    const result = await sandbox.execute(
      'import os\nprint(os.environ["HOSTNAME"], flush=True)\nwhile True:\n    pass',
      { timeoutMs: 1_500 },
    );
    expect(result).toMatchObject({ status: 'timeout', exitCode: null });
    const name = result.stdout.trim();
    expect(name).toMatch(/^ai-toolbelt-execute-[0-9a-f]{12}$/);
    await sandbox.waitForCleanup();
    expect((await ns.pods()).map(pod => pod.name)).not.toContain(name);
  }, 60_000);

  it('refuses sessions with a typed error: they need a Docker engine', async () => {
    const refused = await sandbox.createSession().catch((error: unknown) => error);
    expect(SandboxUnavailableError.isInstance(refused)).toBe(true);
    expect(refused).toMatchObject({ reason: 'unsupported' });
  });

  it('leaves no pod after close()', async () => {
    const other = await DockerSandbox.create(options());
    const result = await other.execute('print(1)', { timeoutMs: 30_000 });
    expect(result.stdout).toBe('1\n');
    await other.close();
    const left = (await ns.pods()).filter(pod => pod.name !== '' && !pod.deleting);
    const mine = JSON.parse(
      await kubectl([
        'get',
        'pods',
        '-n',
        ns.namespace,
        '-l',
        `ai-toolbelt.sandbox.instance=${other.instanceId}`,
        '-o',
        'json',
      ]),
    ) as { items: unknown[] };
    expect(mine.items).toEqual([]);
    expect(left.length).toBeLessThanOrEqual(1); // the suite's own warm pod
  }, 120_000);
});
