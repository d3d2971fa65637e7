import type { V1Lease } from '@kubernetes/client-node';
import type { SharedRecord } from '../driver/engine-driver.ts';
import { type KubeClients, kubeCall } from './kube-client.ts';
import { isKubeGone, statusOf } from './kube-errors.ts';

/** The annotation that holds the record's value. */
const VALUE = 'ai-toolbelt.sandbox/record';

/**
 * A `SharedRecord` kept in a Lease object (coordination.k8s.io) of the sandbox's namespace, its
 * value in an annotation: written with the object's resourceVersion, so of two replicas writing
 * at once one gets 409 and reads again. The Lease's own holder fields are not used.
 *
 * @example
 * ```ts
 * const record = new LeaseRecord({ clients, namespace: 'sandbox', name: 'ai-toolbelt-interpreters', apiTimeoutMs: 15_000 });
 * const { value, version } = await record.read();
 * ```
 */
export class LeaseRecord implements SharedRecord {
  private readonly clients: () => Promise<KubeClients>;
  private readonly namespace: string;
  private readonly name: string;
  private readonly apiTimeoutMs: number;

  constructor({
    clients,
    namespace,
    name,
    apiTimeoutMs,
  }: {
    /** The cluster's clients (connected on first use). */
    clients: () => Promise<KubeClients>;
    /** The sandbox's namespace. */
    namespace: string;
    /** The Lease's name. */
    name: string;
    /** Deadline of each call. */
    apiTimeoutMs: number;
  }) {
    this.clients = clients;
    this.namespace = namespace;
    this.name = name;
    this.apiTimeoutMs = apiTimeoutMs;
  }

  async read(): Promise<{ value: string | undefined; version: string | undefined }> {
    const { coordination } = await this.clients();
    const { name, namespace } = this;
    try {
      const lease = await kubeCall({
        operation: 'lease get',
        timeoutMs: this.apiTimeoutMs,
        call: options => coordination.readNamespacedLease({ name, namespace }, options),
      });
      return {
        value: lease.metadata?.annotations?.[VALUE],
        version: lease.metadata?.resourceVersion,
      };
    } catch (error) {
      if (isKubeGone(error)) return { value: undefined, version: undefined };
      throw error;
    }
  }

  async write(value: string, version: string | undefined): Promise<boolean> {
    const { coordination } = await this.clients();
    const { name, namespace } = this;
    const body: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name,
        namespace,
        labels: { 'ai-toolbelt.sandbox': 'record' },
        annotations: { [VALUE]: value },
        ...(version === undefined ? {} : { resourceVersion: version }),
      },
      spec: {},
    };
    try {
      await kubeCall({
        operation: version === undefined ? 'lease create' : 'lease update',
        timeoutMs: this.apiTimeoutMs,
        call: options =>
          version === undefined
            ? coordination.createNamespacedLease({ namespace, body }, options)
            : coordination.replaceNamespacedLease({ name, namespace, body }, options),
      });
      return true;
    } catch (error) {
      // 409: another replica wrote first (or made it first); 404: it was deleted meanwhile.
      if (statusOf(error) === 409 || isKubeGone(error)) return false;
      throw error;
    }
  }
}
