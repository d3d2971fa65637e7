import type { KubernetesEngineOptions } from '../sandbox/options/kubernetes-options.ts';
import type { DoctorCheck } from './doctor-check.ts';
import { egressTrial } from './doctor-egress-trial.ts';
import { doctorKubernetes } from './doctor-kubernetes.ts';
import { egressRuntimeCheck, pipCheck, TRIAL_CODE, type EngineRuntime } from './doctor-egress.ts';

export type { DoctorCheck } from './doctor-check.ts';

const SETUP = 'sudo npx ai-toolbelt setup-sandbox';

/**
 * Checks what the python tool needs, in order, and says what to fix: Node.js >= 22, a Docker
 * engine that answers (DOCKER_HOST and friends honoured), the gVisor runtime, the sandbox
 * image, and one real run under gVisor. Stops at the first failure (the next checks depend
 * on it). The egress runtime (`runsc-egress`) and pip in the image are checked too; they fail
 * only when `egress` is asked about, except a `runsc-egress` that would give containers a
 * network or no gVisor, which always fails. With `egress`, a last run goes through the egress
 * proxy: one host reached, one refused (both this check's own server on loopback). With
 * `kubernetes`, a cluster is checked instead (see `doctorKubernetes`).
 *
 * @example
 * ```ts
 * const checks = await doctor({ image: 'ai-toolbelt/python:3.11-2', egress: true });
 * if (checks.some(check => !check.ok)) process.exitCode = 1;
 * ```
 */
export async function doctor({
  image,
  egress = false,
  timeoutMs = 60_000,
  kubernetes,
}: {
  /** The sandbox image to check (default: the one this version expects). */
  image?: string;
  /** Whether the egress allow-list must work (its runtime and pip in the image). */
  egress?: boolean;
  /** Check this Kubernetes cluster instead of a Docker engine. */
  kubernetes?: KubernetesEngineOptions;
  /** Longest wait for the trial run. */
  timeoutMs?: number;
} = {}): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const major = Number(process.versions.node.split('.')[0]);
  checks.push({
    name: 'Node.js',
    ok: major >= 22,
    detail: process.versions.node,
    ...(major >= 22 ? {} : { fix: 'install Node.js 22 or newer (ai 7 requires it)' }),
  });
  if (kubernetes !== undefined) {
    checks.push(...(await doctorKubernetes({ image, kubernetes, timeoutMs: 2 * timeoutMs })));
    return checks;
  }
  // Loaded here only: the sandbox subpath brings dockerode.
  const sandboxModule = await import('../sandbox/index.ts');
  const { resolveEngineAddress } = await import('../sandbox/options/engine-address.ts');
  const {
    DockerSandbox,
    DEFAULT_SANDBOX_IMAGE,
    SandboxRuntimeMissingError,
    SandboxUnavailableError,
  } = sandboxModule;
  const wanted = image ?? DEFAULT_SANDBOX_IMAGE;
  let sandbox: InstanceType<typeof DockerSandbox> | undefined;
  try {
    sandbox = await DockerSandbox.create({
      image: wanted,
      warmPoolSize: 0,
      preimport: [],
      sweepOnStart: false,
    });
    const [engine] = sandbox.engineStatus();
    checks.push({
      name: 'Docker engine',
      ok: true,
      detail: `${engine?.name ?? 'default'} answers`,
    });
    checks.push({ name: 'gVisor runtime', ok: true, detail: sandbox.runtime ?? 'runsc' });
    // The same engine the sandbox chose: DOCKER_HOST & co, else the local socket.
    const { docker } = resolveEngineAddress({});
    try {
      const info = (await docker!.info()) as { Runtimes?: Record<string, EngineRuntime> };
      checks.push(egressRuntimeCheck({ runtimes: info.Runtimes ?? {}, egress, fix: SETUP }));
    } catch (error) {
      const detail = `docker info failed: ${error instanceof Error ? error.message : String(error)}`;
      checks.push({ name: 'egress runtime', ok: false, detail });
    }
    const packages = sandbox.packages;
    checks.push({
      name: 'sandbox image',
      ok: true,
      detail: `${wanted}${packages ? ` (${packages.length} Python packages listed)` : ' (no package list label: a custom image)'}`,
    });
    const started = performance.now();
    const result = await sandbox.execute(TRIAL_CODE, { timeoutMs });
    const ms = Math.round(performance.now() - started);
    const [python = '', pip = ''] = result.stdout.split('\n').map(line => line.trim());
    checks.push(
      result.status === 'success'
        ? {
            name: 'run under gVisor',
            ok: true,
            detail: `Python ${python} in ${ms} ms`,
          }
        : {
            name: 'run under gVisor',
            ok: false,
            detail: `${result.status}: ${result.stderr.trim().slice(-300) || 'no output'}`,
            fix: `check the engine's log; rebuild the image with ${SETUP}`,
          },
    );
    if (result.status === 'success') {
      checks.push(
        pipCheck({ version: pip || undefined, egress, fix: `rebuild the image: ${SETUP}` }),
      );
      if (egress && checks.every(check => check.ok)) {
        checks.push(await egressTrial({ image: wanted, timeoutMs, fix: SETUP }));
      }
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (SandboxRuntimeMissingError.isInstance(error)) {
      checks.push({ name: 'Docker engine', ok: true, detail: 'answers' });
      checks.push({ name: 'gVisor runtime', ok: false, detail: message, fix: SETUP });
    } else if (SandboxUnavailableError.isInstance(error) && error.reason === 'image-missing') {
      checks.push({
        name: 'Docker engine',
        ok: true,
        detail: `${error.engine ?? 'default'} answers`,
      });
      checks.push({ name: 'gVisor runtime', ok: true, detail: 'runsc' });
      checks.push({
        name: 'sandbox image',
        ok: false,
        detail: `${wanted} is missing`,
        fix: `${SETUP} (builds it offline from Debian packages, about 4 minutes)`,
      });
    } else {
      checks.push({
        name: 'Docker engine',
        ok: false,
        detail: message,
        fix: `start dockerd (${SETUP} installs and starts it), or set DOCKER_HOST / DOCKER_TLS_VERIFY / DOCKER_CERT_PATH for a remote sandbox host`,
      });
    }
  } finally {
    await sandbox?.close().catch(() => {});
  }
  return checks;
}

/** The report as text, one line per check. */
export function formatDoctor(checks: readonly DoctorCheck[]): string {
  return checks
    .map(
      check =>
        `${check.ok ? 'ok  ' : 'FAIL'} ${check.name}: ${check.detail}${check.fix ? `\n     fix: ${check.fix}` : ''}`,
    )
    .join('\n');
}
