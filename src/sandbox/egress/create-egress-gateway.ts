import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import type Docker from 'dockerode';
import { EgressGateway } from './egress-gateway.ts';
import type { ResolvedEgress } from './egress-options.ts';

/**
 * The sandbox's egress gateway, or undefined without a policy. Every engine must run on this
 * host and be reached over its Unix socket: the proxy's socket is a host path bind-mounted into
 * the container, which an engine elsewhere cannot see (`InvalidArgumentError` otherwise).
 *
 * @example
 * ```ts
 * const gateway = createEgressGateway({ egress: options.egress, engines: options.engines });
 * ```
 */
export function createEgressGateway({
  egress,
  engines,
}: {
  /** The resolved policy, if any. */
  egress: ResolvedEgress | undefined;
  /** The sandbox's engines. */
  engines: ReadonlyArray<{ name: string; docker?: Docker | undefined }>;
}): EgressGateway | undefined {
  if (egress === undefined) return undefined;
  for (const engine of engines) {
    if (engine.docker === undefined) {
      throw new InvalidArgumentError({
        argument: 'egress',
        value: engine.name,
        message:
          `is not available on a Kubernetes engine (${engine.name}): the allow-list is enforced by a ` +
          'proxy on this host that each Docker container reaches through a mounted socket, which a pod on a node cannot. Pods have no network; for packages, bake them into the image (scripts/add-python-packages.sh).',
      });
    }
    const { host } = engine.docker.modem as { host?: unknown };
    if (typeof host === 'string' && host !== '') {
      throw new InvalidArgumentError({
        argument: 'egress',
        value: engine.name,
        message:
          `needs every engine on this host, reached over its Unix socket; ${engine.name} is not. ` +
          "The proxy's socket is a path on this host mounted into each container.",
      });
    }
  }
  return new EgressGateway({ egress });
}
