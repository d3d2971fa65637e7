import type { KubernetesEngineOptions } from '../sandbox/options/kubernetes-options.ts';
import type { DoctorCheck } from './doctor-check.ts';

const GUIDE = 'docs/deploy.md, "On Kubernetes"';
const TRIAL = 'import os, sys\nprint(sys.version.split()[0])\nprint(os.uname().release)';

/**
 * The doctor for a Kubernetes engine, in order, stopping at the first failure: the API server
 * answers (the kubeconfig works), the gVisor RuntimeClass exists, the namespace exists and the
 * app may do what the sandbox does there (a dry run of a sandbox pod, and an access review per
 * verb), the nodes have the image (a real pod starts), and one run under gVisor (gVisor reports
 * its own kernel, 4.4.0).
 *
 * @example
 * ```ts
 * const checks = await doctorKubernetes({ kubernetes: { namespace: 'sandbox' } });
 * ```
 */
export async function doctorKubernetes({
  image,
  kubernetes,
  timeoutMs = 120_000,
}: {
  /** The sandbox image (default: the one this version expects). */
  image?: string | undefined;
  /** The cluster, namespace and RuntimeClass. */
  kubernetes: KubernetesEngineOptions;
  /** Longest wait for the trial run (its pod's start included). */
  timeoutMs?: number;
}): Promise<DoctorCheck[]> {
  const {
    DockerSandbox,
    DEFAULT_SANDBOX_IMAGE,
    SandboxRuntimeMissingError,
    SandboxUnavailableError,
  } = await import('../sandbox/index.ts');
  const wanted = image ?? DEFAULT_SANDBOX_IMAGE;
  const checks: DoctorCheck[] = [];
  const ok = (name: string, detail: string) => checks.push({ name, ok: true, detail });
  const fail = (name: string, detail: string, fix: string) =>
    checks.push({ name, ok: false, detail, fix });
  let sandbox: InstanceType<typeof DockerSandbox> | undefined;
  let stage = 'Kubernetes API server';
  try {
    sandbox = await DockerSandbox.create({
      engines: [{ kubernetes }],
      image: wanted,
      warmPoolSize: 0,
      preimport: [],
      sweepOnStart: false,
    });
    const [engine] = sandbox.engineStatus();
    ok('Kubernetes API server', `${engine?.name ?? 'cluster'} answers`);
    ok('gVisor RuntimeClass', sandbox.runtime ?? 'gvisor');
    ok(
      'namespace and RBAC',
      'a sandbox pod passes admission; every verb the sandbox uses is allowed',
    );
    stage = 'sandbox image';
    const started = performance.now();
    const result = await sandbox.execute(TRIAL, { timeoutMs });
    const ms = Math.round(performance.now() - started);
    ok('sandbox image', `${wanted} started in a pod`);
    const [python = '', kernel = ''] = result.stdout.split('\n');
    if (result.status === 'success' && kernel === '4.4.0') {
      ok('run under gVisor', `Python ${python} in ${ms} ms (pod start included), kernel ${kernel}`);
    } else {
      fail(
        'run under gVisor',
        result.status === 'success'
          ? `the pod reports kernel ${kernel}, not gVisor's`
          : `${result.status}: ${result.stderr.trim().slice(-300) || 'no output'}`,
        `check the RuntimeClass's handler on the nodes (${GUIDE})`,
      );
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (SandboxRuntimeMissingError.isInstance(error)) {
      ok('Kubernetes API server', 'answers');
      fail(
        'gVisor RuntimeClass',
        message,
        `install gVisor on the nodes and create the RuntimeClass (${GUIDE})`,
      );
    } else if (
      SandboxUnavailableError.isInstance(error) &&
      error.reason === 'agent-sandbox-unavailable'
    ) {
      fail(
        'agent-sandbox',
        message,
        "install agent-sandbox's CRDs and controller, or leave AI_TOOLBELT_KUBERNETES_AGENT_SANDBOX unset " +
          '(docs/deploy.md, "Through agent-sandbox")',
      );
    } else if (
      SandboxUnavailableError.isInstance(error) &&
      error.reason !== 'cluster-unreachable'
    ) {
      if (stage === 'Kubernetes API server') {
        ok('Kubernetes API server', 'answers');
        ok('gVisor RuntimeClass', kubernetes.runtimeClassName ?? 'gvisor');
        fail(
          'namespace and RBAC',
          message,
          `apply the namespace, Role and RoleBinding of ${GUIDE}`,
        );
      } else {
        fail(
          stage,
          message,
          `push the image where the nodes pull from, or pass --image (${GUIDE})`,
        );
      }
    } else {
      fail(stage, message, 'check KUBECONFIG (or --kubeconfig) and `kubectl get --raw /readyz`');
    }
  } finally {
    await sandbox?.close().catch(() => {});
  }
  return checks;
}
