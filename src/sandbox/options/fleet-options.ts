import type Docker from 'dockerode';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import { resolveEngineAddress, type EngineAddress, type SandboxEngine } from './engine-address.ts';
import { kubernetesFromEnv, resolveKubernetesEngine } from './kubernetes-options.ts';
import { checkMinimums } from '../../util/check-minimums.ts';

/**
 * Where `DockerSandbox` runs code: one Docker engine or several, and how it watches them.
 *
 * @example
 * ```ts
 * const options: FleetOptions = {
 *   engines: [
 *     { url: 'tcp://10.0.0.5:2376', certPath: '/run/secrets/sandbox-a' },
 *     { url: 'tcp://10.0.0.6:2376', certPath: '/run/secrets/sandbox-b' },
 *   ],
 * };
 * ```
 */
export type FleetOptions = {
  /**
   * Docker client of the one engine (shorthand for `engines: [docker]`). Default: the engine
   * the Docker CLI would use (DOCKER_HOST with DOCKER_TLS_VERIFY / DOCKER_CERT_PATH, else the
   * local socket), or with `AI_TOOLBELT_SANDBOX_ENGINE=kubernetes` the Kubernetes cluster of the
   * kubeconfig (see `kubernetesFromEnv`).
   */
  docker?: Docker;
  /**
   * Several engines: each run goes to the healthy engine with the fewest runs in flight, each
   * engine keeps its own warm pool, and an engine that stops answering is taken out until it
   * answers again. `maxConcurrentExecutions` and `warmPoolSize` apply per engine.
   */
  engines?: SandboxEngine[];
  /** Probe interval of a healthy engine; also the longest back-off between probes of a down one. */
  healthCheckIntervalMs?: number;
  /** How often each engine is swept of expired sandbox containers (of any replica). */
  sweepIntervalMs?: number;
  /** How far apart the clocks of hosts sharing an engine may be; expiry is judged with this margin. */
  clockSkewMs?: number;
  /**
   * Keeps this sandbox's sweeps to containers of the same scope (letters, digits, `_.-`, at most
   * 63): its containers carry the scope as a label, its sweeps remove expired containers of that
   * scope only, and sandboxes without a scope (the default) leave them alone. For apps, or test
   * suites, that share an engine and must never sweep each other's containers.
   */
  scope?: string;
  /**
   * UNSAFE: accept engines reached over plain `tcp://` (HTTP, no TLS), from `engines`,
   * `docker` or DOCKER_HOST. Anyone on the network path can then run containers on the engine
   * and read or change every run. Only for a network you fully trust; otherwise such an
   * engine is refused with `SandboxInsecureEngineError`.
   */
  allowInsecureTcp?: boolean;
};

/** `FleetOptions` resolved: each engine's client and name, and the numbers. */
export type ResolvedFleetOptions = {
  engines: EngineAddress[];
  healthCheckIntervalMs: number;
  sweepIntervalMs: number;
  clockSkewMs: number;
  scope: string | undefined;
};

/** Resolves and checks `FleetOptions` (`InvalidArgumentError` on bad input). */
export function resolveFleetOptions({
  docker,
  engines,
  healthCheckIntervalMs = 5_000,
  sweepIntervalMs = 300_000,
  clockSkewMs = 60_000,
  scope,
  allowInsecureTcp = false,
}: FleetOptions): ResolvedFleetOptions {
  checkMinimums([
    ['healthCheckIntervalMs', healthCheckIntervalMs, 100],
    ['sweepIntervalMs', sweepIntervalMs, 1_000],
    ['clockSkewMs', clockSkewMs, 0],
  ]);
  if (docker !== undefined && engines !== undefined) {
    throw new InvalidArgumentError({
      argument: 'engines',
      value: engines,
      message: 'give either `docker` (one engine) or `engines`, not both',
    });
  }
  if (engines !== undefined && (!Array.isArray(engines) || engines.length === 0)) {
    throw new InvalidArgumentError({
      argument: 'engines',
      value: engines,
      message: 'must be a non-empty array of engines',
    });
  }
  if (scope !== undefined && (typeof scope !== 'string' || !/^[\w.-]{1,63}$/.test(scope))) {
    throw new InvalidArgumentError({
      argument: 'scope',
      value: scope,
      message: 'must be 1 to 63 letters, digits, `_`, `.` or `-` (it becomes a container label)',
    });
  }
  if (typeof allowInsecureTcp !== 'boolean') {
    throw new InvalidArgumentError({
      argument: 'allowInsecureTcp',
      value: allowInsecureTcp,
      message: 'must be true or false',
    });
  }
  const fromEnv = docker === undefined ? kubernetesFromEnv(process.env) : undefined;
  const resolved =
    engines !== undefined
      ? engines.map((engine, i) =>
          resolveEngineAddress({ engine, argument: `engines[${i}]`, allowInsecureTcp }),
        )
      : fromEnv !== undefined
        ? [resolveKubernetesEngine({ options: fromEnv, argument: 'AI_TOOLBELT_SANDBOX_ENGINE' })]
        : [resolveEngineAddress({ engine: docker, argument: 'docker', allowInsecureTcp })];
  const cluster = resolved.findIndex(address => address.kubernetes !== undefined);
  if (cluster >= 0 && resolved.length > 1) {
    throw new InvalidArgumentError({
      argument: `engines[${cluster}]`,
      value: resolved[cluster]!.name,
      message:
        'a Kubernetes engine must be the only engine: the cluster spreads pods over its nodes ' +
        'itself, and its API server counts the bounds (a second engine would not share them)',
    });
  }
  const names = new Set<string>();
  resolved.forEach(({ name }, i) => {
    if (names.has(name)) {
      throw new InvalidArgumentError({
        argument: `engines[${i}]`,
        value: name,
        message: `names engine ${name} twice; give each engine its own address or \`name\``,
      });
    }
    names.add(name);
  });
  return { engines: resolved, healthCheckIntervalMs, sweepIntervalMs, clockSkewMs, scope };
}
