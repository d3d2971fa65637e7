import type { V1Pod } from '@kubernetes/client-node';
import { DockerTimeoutError } from '../../errors/docker-timeout-error.ts';
import { type CallOptions, type KubeClients, kubeCall } from './kube-client.ts';
import { isKubeGone } from './kube-errors.ts';

/** What a wait decides from the object as it is now (undefined: it is gone): a value, or go on. */
export type ObjectDecision<T, O> = (object: O | undefined) => { value: T } | undefined;

/** What a wait decides from the pod as it is now (undefined: it is gone): a value, or go on. */
export type PodDecision<T> = ObjectDecision<T, V1Pod>;

/**
 * Waits until `decide` gives a value for the object `name` of the collection at `path` (a pod,
 * a SandboxClaim): reads it once, then follows its changes with a watch from that version (no
 * polling), reading again whenever the watch ends early (the client ends a quiet watch after
 * 30 s). Rejects with what `decide` throws, with a `DockerTimeoutError` (kind `kubernetes`) at
 * `timeoutMs`, or with the abort reason.
 *
 * @example
 * ```ts
 * const bound = await waitForObject({ clients, path, read, name, operation: 'claim bind', timeoutMs: 60_000, apiTimeoutMs: 15_000, decide: claim => boundTo(claim) });
 * ```
 */
export async function waitForObject<T, O extends { metadata?: { resourceVersion?: string } }>({
  clients,
  path,
  read,
  name,
  operation,
  timeoutMs,
  apiTimeoutMs,
  decide,
  abortSignal,
}: {
  /** The cluster's clients. */
  clients: KubeClients;
  /** The collection's path, for the watch (`/api/v1/namespaces/NS/pods`). */
  path: string;
  /** Reads the object (a 404 counts as gone). */
  read: (options: CallOptions) => Promise<O>;
  /** The object. */
  name: string;
  /** Names the wait in the timeout error. */
  operation: string;
  /** The whole wait's bound (Infinity: until decided or aborted). */
  timeoutMs: number;
  /** Deadline of each read. */
  apiTimeoutMs: number;
  /** Decides from the object (or its absence). */
  decide: ObjectDecision<T, O>;
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
      let found: O | undefined;
      try {
        found = await kubeCall({
          operation: `${operation} (get)`,
          timeoutMs: apiTimeoutMs,
          call: read,
        });
      } catch (error) {
        if (!isKubeGone(error)) throw error;
      }
      const now = decide(found);
      if (now !== undefined) return now.value;
      const decided = await new Promise<{ value: T } | undefined>((resolve, reject) => {
        void clients.watch
          .watch(
            path,
            {
              fieldSelector: `metadata.name=${name}`,
              resourceVersion: found!.metadata?.resourceVersion,
              allowWatchBookmarks: true,
            },
            (type: string, object: O) => {
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

/**
 * `waitForObject` for the pod `name` of `namespace`.
 *
 * @example
 * ```ts
 * const code = await waitForPod({ clients, namespace, name, operation: 'pod exit', timeoutMs: 60_000, apiTimeoutMs: 15_000, decide: pod => exited(pod) });
 * ```
 */
export function waitForPod<T>({
  namespace,
  ...options
}: Omit<Parameters<typeof waitForObject<T, V1Pod>>[0], 'path' | 'read'> & {
  /** The pod's namespace. */
  namespace: string;
}): Promise<T> {
  const { clients, name } = options;
  return waitForObject<T, V1Pod>({
    ...options,
    path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`,
    read: callOptions => clients.core.readNamespacedPod({ name, namespace }, callOptions),
  });
}
