import { DockerDriver } from './docker/docker-driver.ts';
import { KubernetesDriver } from './kubernetes/kubernetes-driver.ts';
import type { EngineDriver } from './driver/engine-driver.ts';
import type { EgressGateway } from './egress/egress-gateway.ts';
import type { ResolvedDockerSandboxOptions } from './options/docker-sandbox-options.ts';
import type { EngineAddress } from './options/engine-address.ts';

/**
 * The driver of one engine of the sandbox's options: a Docker engine with gVisor, or a
 * Kubernetes cluster with a gVisor RuntimeClass.
 *
 * @example
 * ```ts
 * const drivers = options.engines.map(address => createDriver({ address, options, egress }));
 * ```
 */
export function createDriver({
  address,
  options,
  egress,
}: {
  /** The engine, as the options resolved it. */
  address: EngineAddress;
  /** The sandbox's options (image, runtime, deadlines). */
  options: ResolvedDockerSandboxOptions;
  /** The sandbox's egress gateway, with a policy. */
  egress: EgressGateway | undefined;
}): EngineDriver {
  const { image, runtime, unsafeAllowRuncRuntime, dockerTimeoutMs } = options;
  if (address.kubernetes !== undefined) {
    const { memoryBytes, cpus, pidsLimit, tmpfsMiB } = options;
    return new KubernetesDriver({
      ...{ name: address.name, kubernetes: address.kubernetes, unsafeAllowRuncRuntime },
      limits: { image, memoryBytes, cpus, pidsLimit, tmpfsMiB },
      apiTimeoutMs: dockerTimeoutMs,
    });
  }
  return new DockerDriver({
    ...{ name: address.name, docker: address.docker, image, runtime, unsafeAllowRuncRuntime },
    ...{ dockerTimeoutMs, egress },
  });
}
