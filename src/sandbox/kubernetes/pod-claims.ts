import type { V1Pod } from '@kubernetes/client-node';
import type { BoxInfo } from '../driver/engine-driver.ts';
import { type KubeClients, kubeCall } from './kube-client.ts';
import { isKubeGone, statusOf } from './kube-errors.ts';

/**
 * Sets or (null) removes labels of a pod as it was listed, at its resourceVersion: the API server
 * refuses the update (409) if anything changed the pod since, such as another replica's claim.
 * True when this update won; false when the pod changed or is gone.
 *
 * @example
 * ```ts
 * const won = await claimPod({ clients, namespace, box, labels: { [POOL_LABEL]: null }, apiTimeoutMs: 15_000 });
 * ```
 */
export async function claimPod({
  clients,
  namespace,
  box,
  labels,
  apiTimeoutMs,
}: {
  clients: KubeClients;
  /** The pod's namespace. */
  namespace: string;
  /** The pod, as a listing returned it (with the pod itself as `source`). */
  box: BoxInfo;
  /** Labels to set, or (null) to remove. */
  labels: Record<string, string | null>;
  /** Deadline of the call. */
  apiTimeoutMs: number;
}): Promise<boolean> {
  const pod = box.source as V1Pod | undefined;
  if (pod?.metadata?.resourceVersion === undefined) return false;
  const merged: Record<string, string> = { ...pod.metadata.labels };
  for (const [key, value] of Object.entries(labels)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  const body: V1Pod = {
    ...pod,
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...pod.metadata, labels: merged },
  };
  try {
    await kubeCall({
      operation: 'pod update (claim)',
      timeoutMs: apiTimeoutMs,
      call: options =>
        clients.core.replaceNamespacedPod({ name: box.id, namespace, body }, options),
    });
    return true;
  } catch (error) {
    if (statusOf(error) === 409 || isKubeGone(error)) return false;
    throw error;
  }
}
