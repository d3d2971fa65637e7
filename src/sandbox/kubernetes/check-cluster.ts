import type { V1Pod } from '@kubernetes/client-node';
import { SandboxRuntimeMissingError } from '../../errors/sandbox-runtime-missing-error.ts';
import { SandboxUnavailableError } from '../../errors/sandbox-unavailable-error.ts';
import { type KubeClients, kubeCall } from './kube-client.ts';
import { detailOf, isKubeGone, statusOf } from './kube-errors.ts';

/** What the sandbox does in its namespace, as RBAC verbs (docs/deploy.md's Role grants these). */
export const NEEDED_ACCESS: ReadonlyArray<{
  group: string;
  resource: string;
  subresource?: string;
  verbs: string[];
}> = [
  { group: '', resource: 'pods', verbs: ['create', 'get', 'list', 'watch', 'delete', 'update'] },
  // WebSocket attaches are authorized as `get` before Kubernetes 1.35 and `create` from then on.
  { group: '', resource: 'pods', subresource: 'attach', verbs: ['create', 'get'] },
  { group: '', resource: 'pods', subresource: 'log', verbs: ['get'] },
  { group: 'coordination.k8s.io', resource: 'leases', verbs: ['get', 'create', 'update'] },
];

const GVISOR_HANDLER = /runsc|gvisor/i;
const RUNTIME_CLASS_HINT =
  'Install gVisor on the nodes (runsc and its containerd shim, e.g. GKE Sandbox node pools) and create ' +
  'the RuntimeClass: `apiVersion: node.k8s.io/v1, kind: RuntimeClass, metadata: {name: gvisor}, handler: runsc` ' +
  '(docs/deploy.md, "On Kubernetes"), or name yours with `kubernetes.runtimeClassName`.';

/**
 * Checks that a cluster can run the sandbox's pods, each refusal a typed error naming the fix:
 * the API server answers (`cluster-unreachable`); the RuntimeClass exists with a gVisor handler
 * (`SandboxRuntimeMissingError`; skipped when the app may not read RuntimeClasses, since a pod
 * naming a missing one is refused at admission anyway); a server-side dry run of a sandbox pod
 * passes admission (the namespace exists, RBAC lets it create pods, no policy refuses it); and
 * the app may do everything else it needs there (`forbidden`, listing what to grant). The image
 * is checked by the first pod (`image-missing`).
 *
 * @example
 * ```ts
 * await checkCluster({ clients, engine: 'kubernetes:sandbox', namespace: 'sandbox', runtimeClassName: 'gvisor', probe, apiTimeoutMs: 15_000, unsafeAllowRuncRuntime: false });
 * ```
 */
export async function checkCluster({
  clients,
  engine,
  namespace,
  runtimeClassName,
  probe,
  apiTimeoutMs,
  unsafeAllowRuncRuntime,
}: {
  clients: KubeClients;
  /** The engine's name, for errors. */
  engine: string;
  /** The sandbox's namespace. */
  namespace: string;
  /** The gVisor RuntimeClass. */
  runtimeClassName: string;
  /** A sandbox pod as the engine makes them (for the dry run). */
  probe: V1Pod;
  /** Deadline of each call. */
  apiTimeoutMs: number;
  /** Accept a RuntimeClass whose handler is not gVisor (development only). */
  unsafeAllowRuncRuntime: boolean;
}): Promise<void> {
  await kubeCall({
    operation: 'version',
    timeoutMs: apiTimeoutMs,
    call: options => clients.version.getCode(options),
  });
  await checkRuntimeClass({
    clients,
    engine,
    runtimeClassName,
    apiTimeoutMs,
    unsafeAllowRuncRuntime,
  });
  try {
    await kubeCall({
      operation: 'pod create (dry run)',
      timeoutMs: apiTimeoutMs,
      call: options =>
        clients.core.createNamespacedPod({ namespace, body: probe, dryRun: 'All' }, options),
    });
  } catch (error) {
    const detail = detailOf(error);
    if (statusOf(error) === 404) {
      throw new SandboxUnavailableError({
        reason: 'engine-error',
        engine,
        statusCode: 404,
        message:
          `The namespace ${namespace} does not exist on ${engine} (${detail}). Create it with its Role, ` +
          'RoleBinding and NetworkPolicy (docs/deploy.md, "On Kubernetes"), or set `kubernetes.namespace`.',
        cause: error,
      });
    }
    if (/RuntimeClass .* not found/.test(detail)) {
      throw new SandboxRuntimeMissingError({
        runtime: runtimeClassName,
        available: [],
        engine,
        kind: 'kubernetes',
        hint: RUNTIME_CLASS_HINT,
      });
    }
    throw error;
  }
  const denied = await deniedAccess({ clients, namespace, apiTimeoutMs });
  if (denied.length > 0) {
    throw new SandboxUnavailableError({
      reason: 'forbidden',
      engine,
      statusCode: 403,
      message:
        `The sandbox may not ${denied.join(', ')} in namespace ${namespace} on ${engine}. Grant the app's ` +
        'service account the Role of docs/deploy.md ("On Kubernetes"): it lists every verb the sandbox uses.',
    });
  }
}

async function checkRuntimeClass({
  clients,
  engine,
  runtimeClassName,
  apiTimeoutMs,
  unsafeAllowRuncRuntime,
}: {
  clients: KubeClients;
  engine: string;
  runtimeClassName: string;
  apiTimeoutMs: number;
  unsafeAllowRuncRuntime: boolean;
}): Promise<void> {
  let handler: string;
  try {
    const found = await kubeCall({
      operation: 'runtimeclass get',
      timeoutMs: apiTimeoutMs,
      call: options => clients.node.readRuntimeClass({ name: runtimeClassName }, options),
    });
    handler = found.handler;
  } catch (error) {
    // Reading RuntimeClasses needs a ClusterRole the app may not have: admission checks it then.
    if (statusOf(error) === 403) return;
    if (!isKubeGone(error)) throw error;
    throw new SandboxRuntimeMissingError({
      runtime: runtimeClassName,
      available: await runtimeClasses(clients, apiTimeoutMs),
      engine,
      kind: 'kubernetes',
      hint: RUNTIME_CLASS_HINT,
    });
  }
  if (GVISOR_HANDLER.test(handler)) return;
  if (unsafeAllowRuncRuntime) {
    process.emitWarning(
      `ai-toolbelt sandbox pods run under RuntimeClass \`${runtimeClassName}\` (handler ${handler}), ` +
        'WITHOUT gVisor: a kernel exploit in the code escapes the pod. unsafeAllowRuncRuntime is for development only.',
      { type: 'ai-toolbelt.UnsafeRuntime' },
    );
    return;
  }
  throw new SandboxRuntimeMissingError({
    runtime: runtimeClassName,
    available: await runtimeClasses(clients, apiTimeoutMs),
    engine,
    kind: 'kubernetes',
    hint: `It exists with handler \`${handler}\`, which is not gVisor. ${RUNTIME_CLASS_HINT}`,
  });
}

async function runtimeClasses(clients: KubeClients, apiTimeoutMs: number): Promise<string[]> {
  try {
    const list = await kubeCall({
      operation: 'runtimeclass list',
      timeoutMs: apiTimeoutMs,
      call: options => clients.node.listRuntimeClass({}, options),
    });
    return list.items.map(item => `${item.metadata?.name} (${item.handler})`);
  } catch {
    return [];
  }
}

/**
 * The accesses of `needed` (default `NEEDED_ACCESS`) the cluster denies this client in
 * `namespace`, as `verb resource` text (one SelfSubjectAccessReview each).
 *
 * @example
 * ```ts
 * const denied = await deniedAccess({ clients, namespace: 'sandbox', apiTimeoutMs: 15_000 });
 * ```
 */
export async function deniedAccess({
  clients,
  namespace,
  apiTimeoutMs,
  needed = NEEDED_ACCESS,
}: {
  clients: KubeClients;
  namespace: string;
  apiTimeoutMs: number;
  /** The accesses to ask about. */
  needed?: typeof NEEDED_ACCESS;
}): Promise<string[]> {
  const asks = needed.flatMap(({ group, resource, subresource, verbs }) =>
    verbs.map(verb => ({ group, resource, subresource, verb })),
  );
  const answers = await Promise.all(
    asks.map(({ group, resource, subresource, verb }) =>
      kubeCall({
        operation: 'selfsubjectaccessreview create',
        timeoutMs: apiTimeoutMs,
        call: options =>
          clients.authorization.createSelfSubjectAccessReview(
            {
              body: {
                spec: {
                  resourceAttributes: {
                    namespace,
                    group,
                    resource,
                    verb,
                    ...(subresource ? { subresource } : {}),
                  },
                },
              },
            },
            options,
          ),
      }),
    ),
  );
  return asks
    .filter((_, i) => answers[i]!.status?.allowed !== true)
    .map(
      ({ group, resource, subresource, verb }) =>
        `${verb} ${resource}${subresource ? `/${subresource}` : ''}${group ? ` (${group})` : ''}`,
    );
}
