import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/invalid-argument-error.ts';
import {
  DockerSandbox,
  SandboxRuntimeMissingError,
  SandboxUnavailableError,
} from '../../src/sandbox/index.ts';
import { resolveFleetOptions } from '../../src/sandbox/options/fleet-options.ts';
import { SANDBOX_IMAGE, describeKubernetes, kubectl } from './cluster.ts';
import { type SandboxNamespace, createSandboxNamespace } from './sandbox-namespace.ts';

// Every refusal of a cluster is a typed error naming the fix, with no fallback to anything else.
const run = promisify(execFile);
const cli = join(import.meta.dirname, '..', '..', 'src', 'cli.ts');
let ns: SandboxNamespace;
const dir = mkdtempSync(join(tmpdir(), 'aitb-refusals-'));

function engine(kubernetes: Record<string, unknown>) {
  return ns.engine(kubernetes);
}

async function refusal(options: Parameters<typeof DockerSandbox.create>[0]): Promise<unknown> {
  const sandbox = await DockerSandbox.create({ image: SANDBOX_IMAGE, ...options }).catch(
    (error: unknown) => error,
  );
  if (sandbox instanceof DockerSandbox) {
    await sandbox.close();
    throw new Error('the sandbox started');
  }
  return sandbox;
}

describeKubernetes('Kubernetes engine: refusals are typed errors that name the fix', () => {
  beforeAll(async () => {
    ns = await createSandboxNamespace();
  }, 120_000);

  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await ns?.remove();
  }, 180_000);

  it('no cluster: cluster-unreachable, naming the kubeconfig and the engine', async () => {
    const missing = await refusal({ engines: [engine({ kubeconfig: join(dir, 'absent') })] });
    expect(missing).toMatchObject({ reason: 'cluster-unreachable' });
    expect((missing as Error).message).toContain('KUBECONFIG');
    const config = join(dir, 'nowhere');
    writeFileSync(
      config,
      'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\n' +
        'users: [{name: u, user: {token: x}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n' +
        'current-context: c\n',
    );
    const down = await refusal({ engines: [engine({ kubeconfig: config, name: 'nowhere' })] });
    expect(SandboxUnavailableError.isInstance(down)).toBe(true);
    expect(down).toMatchObject({ reason: 'cluster-unreachable', engine: 'nowhere' });
    expect((down as Error).message).toContain('/readyz');
  }, 60_000);

  it('no gVisor RuntimeClass: SandboxRuntimeMissingError with the RuntimeClass to create', async () => {
    const missing = await refusal({ engines: [engine({ runtimeClassName: 'no-such-class' })] });
    expect(SandboxRuntimeMissingError.isInstance(missing)).toBe(true);
    expect(missing).toMatchObject({ runtime: 'no-such-class' });
    expect((missing as Error).message).toContain('kind: RuntimeClass');
  }, 60_000);

  it('RBAC: forbidden, naming what to grant, for no binding and for a Role missing one verb', async () => {
    // The manifest's names are the namespace's (see createSandboxNamespace).
    await kubectl(['delete', 'rolebinding', ns.namespace, '-n', ns.namespace]);
    try {
      const none = await refusal({ engines: [engine({})] });
      expect(none).toMatchObject({ reason: 'forbidden', statusCode: 403 });
      expect((none as Error).message).toContain('pods/attach');
      // The documented Role without pods/log: the access review names exactly that.
      const role = JSON.parse(
        await kubectl(['get', 'role', ns.namespace, '-n', ns.namespace, '-o', 'json']),
      );
      role.rules = role.rules.filter(
        (rule: { resources: string[] }) => rule.resources[0] !== 'pods/log',
      );
      role.metadata = { name: 'partial', namespace: ns.namespace };
      await kubectl(['apply', '-f', '-'], { input: JSON.stringify(role) });
      await kubectl([
        ...['create', 'rolebinding', 'partial', '-n', ns.namespace, '--role=partial'],
        `--serviceaccount=${ns.namespace}:ai-toolbelt-app`,
      ]);
      const partial = await refusal({ engines: [engine({})] });
      expect(partial).toMatchObject({ reason: 'forbidden' });
      expect((partial as Error).message).toContain('may not get pods/log in namespace');
      expect((partial as Error).message).not.toContain('pods/attach');
    } finally {
      await kubectl(['delete', 'rolebinding', 'partial', '-n', ns.namespace, '--ignore-not-found']);
      await kubectl(['apply', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: ns.namespace, namespace: ns.namespace },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: ns.namespace },
          subjects: [{ kind: 'ServiceAccount', name: 'ai-toolbelt-app', namespace: ns.namespace }],
        }),
      });
    }
  }, 90_000);

  it('an image the nodes do not have: image-missing at the first run, and no pod left', async () => {
    const sandbox = await DockerSandbox.create({
      engines: [engine({ imagePullPolicy: 'Never' })],
      image: 'ai-toolbelt/no-such-image:1',
      warmPoolSize: 0,
      preimport: [],
    });
    try {
      const error = await sandbox.execute('print(1)').catch((caught: unknown) => caught);
      expect(error).toMatchObject({ reason: 'image-missing' });
      expect((error as Error).message).toContain('ai-toolbelt/no-such-image:1');
    } finally {
      await sandbox.close();
    }
    expect((await ns.pods()).filter(pod => !pod.deleting)).toEqual([]);
  }, 90_000);

  it('egress and mixed fleets are refused at construction, not silently dropped', () => {
    expect(
      () => new DockerSandbox({ engines: [engine({})], egress: { allow: ['pypi.org'] } }),
    ).toThrow(/egress.*not available on a Kubernetes engine/);
    const mixed = (() => {
      try {
        return new DockerSandbox({ engines: [engine({}), 'unix:///var/run/docker.sock'] });
      } catch (error) {
        return error;
      }
    })();
    expect(InvalidArgumentError.isInstance(mixed)).toBe(true);
    expect(mixed).toMatchObject({ argument: 'engines[0]' });
  });

  it('AI_TOOLBELT_SANDBOX_ENGINE=kubernetes picks the cluster when no engine is given', () => {
    const saved = { ...process.env };
    try {
      Object.assign(process.env, {
        AI_TOOLBELT_SANDBOX_ENGINE: 'kubernetes',
        AI_TOOLBELT_KUBERNETES_NAMESPACE: 'apps-sandbox',
      });
      expect(resolveFleetOptions({}).engines).toEqual([
        {
          name: 'kubernetes:apps-sandbox',
          kubernetes: expect.objectContaining({
            namespace: 'apps-sandbox',
            runtimeClassName: 'gvisor',
          }),
        },
      ]);
      process.env.AI_TOOLBELT_SANDBOX_ENGINE = 'podman';
      expect(() => resolveFleetOptions({})).toThrow(/AI_TOOLBELT_SANDBOX_ENGINE/);
    } finally {
      process.env = saved;
    }
  });

  it('`ai-toolbelt doctor --kubernetes` passes here with the documented Role, and names the fix when the namespace is missing', async () => {
    const doctor = async (args: string[]) => {
      try {
        const { stdout } = await run(process.execPath, [cli, 'doctor', '--json', ...args], {
          env: { ...process.env, AI_TOOLBELT_SANDBOX_IMAGE: SANDBOX_IMAGE },
        });
        return { code: 0, checks: JSON.parse(stdout) as Array<{ name: string; ok: boolean }> };
      } catch (error) {
        const { code, stdout } = error as { code: number; stdout: string };
        return { code, checks: JSON.parse(stdout) as Array<{ name: string; ok: boolean }> };
      }
    };
    const flags = ['--kubernetes', '--kubeconfig', ns.kubeconfig, '--image', SANDBOX_IMAGE];
    const good = await doctor([...flags, '--namespace', ns.namespace]);
    expect(good.checks.map(check => [check.name, check.ok])).toEqual([
      ['Node.js', true],
      ['Kubernetes API server', true],
      ['gVisor RuntimeClass', true],
      ['namespace and RBAC', true],
      ['sandbox image', true],
      ['run under gVisor', true],
    ]);
    expect(good.code).toBe(0);
    const bad = await doctor([...flags, '--namespace', 'no-such-namespace']);
    expect(bad.code).toBe(1);
    expect(bad.checks.at(-1)).toMatchObject({ name: 'namespace and RBAC', ok: false });
  }, 120_000);
});
