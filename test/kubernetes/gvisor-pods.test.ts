import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SANDBOX_IMAGE, describeKubernetes, kubectl, waitForPodEnd } from './cluster.ts';

// One-use pods as the Kubernetes engine will make them: RuntimeClass gvisor, the sandbox image
// (imported, never pulled), non-root, read-only root, no capabilities, a memory limit.
const namespace = `aitb-test-${randomBytes(4).toString('hex')}`;

function sandboxPod(name: string, code: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { 'ai-toolbelt.test': 'gvisor-pods' } },
    spec: {
      runtimeClassName: 'gvisor',
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      securityContext: { runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true },
      containers: [
        {
          name: 'python',
          image: SANDBOX_IMAGE,
          imagePullPolicy: 'Never',
          command: ['python3', '-c', code],
          securityContext: {
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'] },
          },
          resources: {
            requests: { cpu: '50m', memory: '64Mi' },
            limits: { cpu: '1', memory: '256Mi' },
          },
        },
      ],
    },
  };
}

/** Runs `code` in a fresh pod to its end; returns its phase and output, then deletes it. */
async function runPod(name: string, code: string): Promise<{ phase: string; output: string }> {
  await kubectl(['create', '-f', '-'], { input: JSON.stringify(sandboxPod(name, code)) });
  try {
    const phase = await waitForPodEnd(namespace, name);
    const output = await kubectl(['logs', name, '-n', namespace]);
    return { phase, output };
  } finally {
    await kubectl(['delete', 'pod', name, '-n', namespace, '--wait=true', '--timeout=60s']);
  }
}

describeKubernetes('pods under gVisor on Kubernetes (RuntimeClass gvisor)', () => {
  beforeAll(async () => {
    await kubectl(['create', 'namespace', namespace]);
    // The controller-manager gives every namespace a default ServiceAccount; pods wait for it.
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const found = await kubectl(['get', 'serviceaccounts', '-n', namespace, '-o', 'name']);
      if (found.includes('serviceaccount/default')) return;
      await new Promise(resolve => setTimeout(resolve, 200));
    }
    throw new Error(`namespace ${namespace} got no default ServiceAccount in 30 s`);
  });

  afterAll(async () => {
    await kubectl(['delete', 'namespace', namespace, '--wait=true', '--timeout=90s']);
  }, 120_000);

  it('runs Python in gVisor as a non-root user with a read-only root, no capabilities and the memory limit', async () => {
    const code = [
      'import os, errno',
      'print(os.uname().release)',
      'print(os.getuid(), os.getgid())',
      'try:',
      // /var/tmp is world-writable in the image: only a read-only root refuses it. (Not /tmp:
      // runsc mounts a tmpfs there when the image's /tmp is empty.)
      '    open("/var/tmp/probe", "w")',
      '    print("root writable")',
      'except OSError as e:',
      '    print(errno.errorcode[e.errno])',
      'status = dict(l.split(":", 1) for l in open("/proc/self/status"))',
      'print(status["CapEff"].strip(), status["CapBnd"].strip())',
      'meminfo = dict(l.split(":", 1) for l in open("/proc/meminfo"))',
      'print(meminfo["MemTotal"].strip())',
    ].join('\n');
    const { phase, output } = await runPod('uname', code);
    expect(phase, output).toBe('Succeeded');
    const [release, ids, rootWrite, caps, memTotal] = output.trim().split('\n');
    // gVisor reports its own kernel version; the host's would be 6.x.
    expect(release).toBe('4.4.0');
    expect(ids).toBe('1000 1000');
    expect(rootWrite).toBe('EROFS');
    expect(caps).toBe('0000000000000000 0000000000000000');
    // gVisor shows the container's memory limit as the machine's total memory.
    expect(memTotal).toBe(`${256 * 1024} kB`);
  }, 120_000);

  it('gives a pod no network: no interface but loopback, the host loopback unreachable, no DNS', async () => {
    let connections = 0;
    const server: Server = createServer(socket => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const code = [
        'import json, socket',
        'def connect(host, port):',
        '    s = socket.socket()',
        '    s.settimeout(5)',
        '    try:',
        '        s.connect((host, port))',
        '        return "connected"',
        '    except OSError as e:',
        '        return type(e).__name__',
        'def resolve(name):',
        '    try:',
        '        socket.getaddrinfo(name, 443)',
        '        return "resolved"',
        '    except OSError as e:',
        '        return type(e).__name__',
        'print(json.dumps({',
        '    "interfaces": [name for _, name in socket.if_nameindex()],',
        `    "hostServer": connect("127.0.0.1", ${port}),`,
        '    "apiServer": connect("127.0.0.1", 16443),',
        '    "dns": resolve("kubernetes.default.svc"),',
        '}))',
      ].join('\n');
      const { phase, output } = await runPod('no-network', code);
      expect(phase, output).toBe('Succeeded');
      expect(JSON.parse(output)).toEqual({
        interfaces: ['lo'],
        hostServer: 'ConnectionRefusedError',
        apiServer: 'ConnectionRefusedError',
        dns: 'gaierror',
      });
      expect(connections).toBe(0);
    } finally {
      await new Promise(resolve => server.close(resolve));
    }
  }, 120_000);
});
