import { DockerTimeoutError } from '../../errors/docker-timeout-error.ts';
import type { CleanupTracker } from '../driver/cleanup-tracker.ts';
import type { BoxSpec } from '../driver/engine-driver.ts';
import type { ResolvedKubernetesOptions } from '../options/kubernetes-options.ts';
import { type KubeClients, kubeCall } from './kube-client.ts';
import { podManifest, podName } from './pod-spec.ts';
import { startOutcome } from './pod-state.ts';
import { waitForPod } from './object-waits.ts';

/**
 * Creates a box's pod and waits until its container runs (or why it never will: no image, a
 * container that cannot be made, a pod that ended: typed errors), within `podStartTimeoutMs`;
 * the timeout's error says what the pod was waiting for (a node with room, the image...). A pod
 * that was made and failed is handed to `cleanup`. Returns its name.
 *
 * @example
 * ```ts
 * const name = await startPod({ clients, options, spec, engine, image, apiTimeoutMs: 15_000, cleanup });
 * ```
 */
export async function startPod({
  clients,
  options,
  spec,
  engine,
  apiTimeoutMs,
  cleanup,
  abortSignal,
}: {
  clients: KubeClients;
  /** The engine's Kubernetes options. */
  options: ResolvedKubernetesOptions;
  /** What to run. */
  spec: BoxSpec;
  /** The engine's name, for errors. */
  engine: string;
  /** Deadline of each API call. */
  apiTimeoutMs: number;
  /** Removes a pod whose start failed. */
  cleanup: Pick<CleanupTracker, 'remove'>;
  /** Stops the wait (and removes the pod). */
  abortSignal?: AbortSignal | undefined;
}): Promise<string> {
  const name = podName(spec.kind);
  const body = podManifest({ name, spec, options });
  const { namespace } = options;
  try {
    await kubeCall({
      operation: 'pod create',
      timeoutMs: apiTimeoutMs,
      call: callOptions => clients.core.createNamespacedPod({ namespace, body }, callOptions),
    });
  } catch (error) {
    // A create that timed out may still have made it; an answer (or no connection) did not.
    if (DockerTimeoutError.isInstance(error)) void cleanup.remove(name);
    throw error;
  }
  let waiting = 'pending';
  try {
    await waitForPod({
      ...{ clients, namespace, name, abortSignal, apiTimeoutMs },
      operation: 'pod start',
      timeoutMs: options.podStartTimeoutMs,
      decide: pod => {
        const outcome = startOutcome({ pod, engine, image: spec.limits.image });
        if ('value' in outcome) return outcome;
        waiting = outcome.waiting;
        return undefined;
      },
    });
    return name;
  } catch (error) {
    void cleanup.remove(name);
    if (!DockerTimeoutError.isInstance(error) || error.operation !== 'pod start') throw error;
    throw new DockerTimeoutError({
      ...{ operation: `pod start (${name}: ${waiting})`, timeoutMs: error.timeoutMs },
      ...{ engine, kind: 'kubernetes' },
    });
  }
}
