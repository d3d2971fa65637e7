// kubernetes/: a Kubernetes cluster as an engine: pods under a gVisor RuntimeClass through the API
// server (the official client, loaded only here), their attach streams, waits, errors and checks.
import type {
  Attach,
  AuthorizationV1Api,
  ConfigurationOptions,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  NodeV1Api,
  ObservableMiddleware,
  VersionApi,
  Watch,
} from '@kubernetes/client-node';
import { DockerTimeoutError } from '../../errors/docker-timeout-error.ts';
import { withDeadline } from '../../util/with-deadline.ts';

/** The API clients of one cluster, from its kubeconfig. */
export type KubeClients = {
  config: KubeConfig;
  core: CoreV1Api;
  /** Custom resources (agent-sandbox's claims, templates and warm pools). */
  custom: CustomObjectsApi;
  coordination: CoordinationV1Api;
  authorization: AuthorizationV1Api;
  node: NodeV1Api;
  version: VersionApi;
  attach: Attach;
  watch: Watch;
};

type ClientModule = typeof import('@kubernetes/client-node');
type Observables = typeof import('@kubernetes/client-node/dist/gen/rxjsStub.js');
let clientModule: Promise<ClientModule> | undefined;
let observables: Observables | undefined;

/** `@kubernetes/client-node`, loaded on first use (a Docker-only app never loads it). */
export function loadClientModule(): Promise<ClientModule> {
  // The generated client's per-call middleware answers with its own Observable type.
  clientModule ??= import('@kubernetes/client-node/dist/gen/rxjsStub.js').then(async stub => {
    observables = stub;
    return await import('@kubernetes/client-node');
  });
  return clientModule;
}

/**
 * The clients for the cluster of a kubeconfig: the file given, else `KUBECONFIG`,
 * `~/.kube/config` or the pod's service account (the client's `loadFromDefault`), at `context`
 * when given. Throws when there is no usable kubeconfig (the caller types the error).
 *
 * @example
 * ```ts
 * const clients = await kubeClients({ kubeconfig: '/etc/ai-toolbelt/kubernetes/admin.kubeconfig' });
 * ```
 */
export async function kubeClients({
  kubeconfig,
  context,
}: {
  /** Path of a kubeconfig. */
  kubeconfig?: string | undefined;
  /** A context of it. */
  context?: string | undefined;
}): Promise<KubeClients> {
  const k8s = await loadClientModule();
  const config = new k8s.KubeConfig();
  if (kubeconfig !== undefined) config.loadFromFile(kubeconfig);
  else config.loadFromDefault();
  if (context !== undefined) config.setCurrentContext(context);
  if (config.getCurrentCluster() === null) {
    throw new Error(
      `no cluster in the kubeconfig${kubeconfig === undefined ? ' (KUBECONFIG, ~/.kube/config, in-cluster)' : ` ${kubeconfig}`}`,
    );
  }
  return {
    config,
    core: config.makeApiClient(k8s.CoreV1Api),
    custom: config.makeApiClient(k8s.CustomObjectsApi),
    coordination: config.makeApiClient(k8s.CoordinationV1Api),
    authorization: config.makeApiClient(k8s.AuthorizationV1Api),
    node: config.makeApiClient(k8s.NodeV1Api),
    version: config.makeApiClient(k8s.VersionApi),
    attach: new k8s.Attach(config),
    watch: new k8s.Watch(config),
  };
}

/** The per-call options the generated client takes: here, the abort signal of a deadline. */
export type CallOptions = ConfigurationOptions<ObservableMiddleware>;

/**
 * One API call with a deadline: the client's request is aborted through its signal, and the
 * race answers at the deadline in any case (`DockerTimeoutError` naming the operation, as for
 * every engine call).
 *
 * @example
 * ```ts
 * const pod = await kubeCall({ operation: 'pod get', timeoutMs: 15_000, call: options => core.readNamespacedPod({ name, namespace }, options) });
 * ```
 */
export function kubeCall<T>({
  operation,
  timeoutMs,
  call,
}: {
  /** Names the call in the timeout error, e.g. `pod create`. */
  operation: string;
  /** Its deadline. */
  timeoutMs: number;
  /** The call; pass `options` on as the client's last argument. */
  call: (options: CallOptions) => Promise<T>;
}): Promise<T> {
  return withDeadline({
    timeoutMs,
    run: signal =>
      call({
        middleware: [
          {
            pre: context => {
              context.setSignal(signal);
              return observables!.of(context);
            },
            post: context => observables!.of(context),
          },
        ],
        middlewareMergeStrategy: 'append',
      }),
    timeoutError: () => new DockerTimeoutError({ operation, timeoutMs, kind: 'kubernetes' }),
  });
}
