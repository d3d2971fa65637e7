import type { V1Pod } from '@kubernetes/client-node';
import { DockerTimeoutError } from '../../errors/docker-timeout-error.ts';
import { type KubeClients, kubeCall } from './kube-client.ts';
import { isKubeGone } from './kube-errors.ts';

/** What a wait decides from the pod as it is now (undefined: it is gone): a value, or go on. */
export type PodDecision<T> = (pod: V1Pod | undefined) => { value: T } | undefined;

/**
 * Waits until `decide` gives a value for the pod `name`: reads it once, then follows its changes
 * with a watch from that version (no polling), reading again whenever the watch ends early (the
 * client ends a quiet watch after 30 s). Rejects with what `decide` throws, with a
 * `DockerTimeoutError` (kind `kubernetes`) at `timeoutMs`, or with the abort reason.
 *
 * @example
 * ```ts
 * const code = await waitForPod({ clients, namespace, name, operation: 'pod exit', timeoutMs: 60_000, apiTimeoutMs: 15_000, decide: pod => exited(pod) });
 * ```
 */
export async function waitForPod<T>({
  clients,
  namespace,
  name,
  operation,
  timeoutMs,
  apiTimeoutMs,
  decide,
  abortSignal,
}: {
  /** The cluster's clients. */
  clients: KubeClients;
  /** The pod's namespace. */
  namespace: string;
  /** The pod. */
  name: string;
  /** Names the wait in the timeout error. */
  operation: string;
  /** The whole wait's bound (Infinity: until decided or aborted). */
  timeoutMs: number;
  /** Deadline of each read. */
  apiTimeoutMs: number;
  /** Decides from the pod (or its absence). */
  decide: PodDecision<T>;
  /** Stops the wait. */
  abortSignal?: AbortSignal | undefined;
}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let finished = false;
  let stopWatch: AbortController | undefined;
  const cleanups: Array<() => void> = [];
  const timeout = new Promise<never>((_, reject) => {
    if (!Number.isFinite(timeoutMs)) return;
    const timer = setTimeout(
      () => reject(new DockerTimeoutError({ operation, timeoutMs, kind: 'kubernetes' })),
      timeoutMs,
    );
    cleanups.push(() => clearTimeout(timer));
  });
  const aborted = new Promise<never>((_, reject) => {
    const onAbort = () => reject(abortSignal?.reason);
    abortSignal?.addEventListener('abort', onAbort, { once: true });
    if (abortSignal?.aborted) onAbort();
    cleanups.push(() => abortSignal?.removeEventListener('abort', onAbort));
  });
  const follow = async (): Promise<T> => {
    while (!finished && Date.now() < deadline) {
      let pod: V1Pod | undefined;
      try {
        pod = await kubeCall({
          operation: 'pod get',
          timeoutMs: apiTimeoutMs,
          call: options => clients.core.readNamespacedPod({ name, namespace }, options),
        });
      } catch (error) {
        if (!isKubeGone(error)) throw error;
      }
      const now = decide(pod);
      if (now !== undefined) return now.value;
      const decided = await new Promise<{ value: T } | undefined>((resolve, reject) => {
        void clients.watch
          .watch(
            `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`,
            {
              fieldSelector: `metadata.name=${name}`,
              resourceVersion: pod!.metadata?.resourceVersion,
              allowWatchBookmarks: true,
            },
            (type: string, object: V1Pod) => {
              if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
              try {
                const next = decide(type === 'DELETED' ? undefined : object);
                if (next !== undefined) resolve(next);
              } catch (error) {
                reject(error);
              }
            },
            // Ended early (a quiet watch, a dropped connection, a version too old): read again.
            () => resolve(undefined),
          )
          .then(controller => {
            stopWatch = controller;
            if (finished) controller.abort();
          }, reject);
      }).finally(() => stopWatch?.abort());
      if (decided !== undefined) return decided.value;
    }
    // The timeout above answers.
    return await timeout;
  };
  const following = follow();
  // Settled after the race (a read failing past the deadline) is nobody's business.
  following.catch(() => {});
  try {
    return await Promise.race([following, timeout, aborted]);
  } finally {
    finished = true;
    stopWatch?.abort();
    for (const cleanup of cleanups) cleanup();
  }
}
