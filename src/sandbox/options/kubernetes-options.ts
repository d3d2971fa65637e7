import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import { checkMinimums } from '../../util/check-minimums.ts';

/**
 * A Kubernetes cluster as the sandbox's engine: each run, and each conversation's interpreter,
 * is a pod under gVisor (a RuntimeClass) in one namespace, reached through the API server (the
 * official client, `@kubernetes/client-node`, loaded only for such an engine). Every option has
 * a default; the namespace, its RBAC Role, the RuntimeClass and a default-deny NetworkPolicy are
 * the cluster's side (docs/deploy.md, "On Kubernetes").
 *
 * @example
 * ```ts
 * const sandbox = await DockerSandbox.create({ engines: [{ kubernetes: { namespace: 'sandbox' } }] });
 * ```
 */
export type KubernetesEngineOptions = {
  /**
   * Path of a kubeconfig. Default: `KUBECONFIG`, else `~/.kube/config`, else the pod's own
   * service account when the app runs in the cluster.
   */
  kubeconfig?: string;
  /** The kubeconfig's context to use (default: its current one). */
  context?: string;
  /** Namespace of the sandbox's pods (and its leases); default `ai-toolbelt-sandbox`. */
  namespace?: string;
  /** The RuntimeClass whose handler is gVisor's runsc (default `gvisor`, as on GKE Sandbox). */
  runtimeClassName?: string;
  /** The pods' `imagePullPolicy` (default `IfNotPresent`). */
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /** CPU each pod asks the scheduler for, cores (its limit is `cpus`); default 0.1. */
  cpuRequest?: number;
  /** How long a pod may take to be scheduled and start (default 60 s). */
  podStartTimeoutMs?: number;
  /** Labels of the nodes the pods may go to (beside the RuntimeClass's own scheduling). */
  nodeSelector?: Record<string, string>;
  /** Name in errors and status; default `kubernetes:<namespace>`. */
  name?: string;
  /**
   * Take sandboxes through kubernetes-sigs/agent-sandbox (its CRDs and controller installed in
   * the cluster): each box is a SandboxClaim on a SandboxWarmPool of a SandboxTemplate that
   * carries the same hardened pod, and is released by deleting the claim. Off by default (or
   * `false`): the engine makes its own pods. `true`, or `{ warmPoolSize }`: warm sandboxes each pool keeps
   * (default 2). A cluster without the CRDs or whose controller does not bind claims is a typed
   * error (`agent-sandbox-unavailable`), never a silent switch back.
   */
  agentSandbox?: boolean | { warmPoolSize?: number };
};

/** `KubernetesEngineOptions` with the defaults filled in. */
export type ResolvedKubernetesOptions = Required<
  Omit<KubernetesEngineOptions, 'kubeconfig' | 'context' | 'name' | 'nodeSelector' | 'agentSandbox'>
> &
  Pick<KubernetesEngineOptions, 'kubeconfig' | 'context' | 'nodeSelector'> & {
    /** Set when boxes are taken through agent-sandbox. */
    agentSandbox?: { warmPoolSize: number };
  };

// A DNS-1123 label: namespaces, RuntimeClass names.
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * Resolves one Kubernetes engine entry (`{ kubernetes: {...} }`) to its name and options;
 * `InvalidArgumentError` names a bad option (`engines[0].kubernetes.namespace`).
 *
 * @example
 * ```ts
 * const { name, kubernetes } = resolveKubernetesEngine({ options: { namespace: 'sandbox' }, argument: 'engines[0]' });
 * ```
 */
export function resolveKubernetesEngine({
  options,
  argument,
}: {
  /** The entry's `kubernetes` object. */
  options: KubernetesEngineOptions;
  /** Names the entry in errors. */
  argument: string;
}): { name: string; kubernetes: ResolvedKubernetesOptions } {
  const prefix = `${argument}.kubernetes.`;
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError({
      argument: `${argument}.kubernetes`,
      value: options,
      message: 'must be an object of Kubernetes options (or {} for the defaults)',
    });
  }
  const {
    kubeconfig,
    context,
    namespace = 'ai-toolbelt-sandbox',
    runtimeClassName = 'gvisor',
    imagePullPolicy = 'IfNotPresent',
    cpuRequest = 0.1,
    podStartTimeoutMs = 60_000,
    nodeSelector,
    name = `kubernetes:${namespace}`,
    agentSandbox,
  } = options;
  checkMinimums(
    [
      ['cpuRequest', cpuRequest, 0.001],
      ['podStartTimeoutMs', podStartTimeoutMs, 1_000],
    ],
    { prefix },
  );
  const invalid = (option: string, value: unknown, message: string) =>
    new InvalidArgumentError({ argument: `${prefix}${option}`, value, message });
  for (const [option, value] of [
    ['namespace', namespace],
    ['runtimeClassName', runtimeClassName],
  ] as const) {
    if (typeof value !== 'string' || !DNS_LABEL.test(value)) {
      throw invalid(option, value, 'must be a DNS label (lower-case letters, digits and `-`)');
    }
  }
  if (!['Always', 'IfNotPresent', 'Never'].includes(imagePullPolicy)) {
    throw invalid('imagePullPolicy', imagePullPolicy, 'must be Always, IfNotPresent or Never');
  }
  for (const [option, value] of [
    ['kubeconfig', kubeconfig],
    ['context', context],
    ['name', name],
  ] as const) {
    if (value !== undefined && (typeof value !== 'string' || value.trim() === '')) {
      throw invalid(option, value, 'must be a non-empty string');
    }
  }
  if (
    nodeSelector !== undefined &&
    (typeof nodeSelector !== 'object' ||
      nodeSelector === null ||
      !Object.values(nodeSelector).every(value => typeof value === 'string'))
  ) {
    throw invalid('nodeSelector', nodeSelector, 'must map label names to strings');
  }
  const useAgentSandbox = agentSandbox !== undefined && agentSandbox !== false;
  const warmPoolSize = typeof agentSandbox === 'object' ? (agentSandbox?.warmPoolSize ?? 2) : 2;
  if (
    useAgentSandbox &&
    (!(agentSandbox === true || (typeof agentSandbox === 'object' && agentSandbox !== null)) ||
      !Number.isInteger(warmPoolSize) ||
      warmPoolSize < 0)
  ) {
    throw invalid(
      'agentSandbox',
      agentSandbox,
      'must be true, false or { warmPoolSize } with a whole number of warm sandboxes (0 or more)',
    );
  }
  return {
    name,
    kubernetes: {
      ...{ namespace, runtimeClassName, imagePullPolicy, cpuRequest, podStartTimeoutMs },
      ...(kubeconfig === undefined ? {} : { kubeconfig }),
      ...(context === undefined ? {} : { context }),
      ...(nodeSelector === undefined ? {} : { nodeSelector }),
      ...(useAgentSandbox ? { agentSandbox: { warmPoolSize } } : {}),
    },
  };
}

/**
 * The Kubernetes engine the environment asks for: with `AI_TOOLBELT_SANDBOX_ENGINE=kubernetes`,
 * the cluster of the kubeconfig (`KUBECONFIG`, ...) in `AI_TOOLBELT_KUBERNETES_NAMESPACE` (default
 * `ai-toolbelt-sandbox`) with RuntimeClass `AI_TOOLBELT_KUBERNETES_RUNTIME_CLASS` (default
 * `gvisor`), through agent-sandbox when `AI_TOOLBELT_KUBERNETES_AGENT_SANDBOX=1`; undefined for
 * `docker` or when unset.
 *
 * @example
 * ```ts
 * kubernetesFromEnv({ AI_TOOLBELT_SANDBOX_ENGINE: 'kubernetes' }); // { namespace: 'ai-toolbelt-sandbox' }
 * ```
 */
export function kubernetesFromEnv(env: NodeJS.ProcessEnv): KubernetesEngineOptions | undefined {
  const engine = env.AI_TOOLBELT_SANDBOX_ENGINE ?? '';
  if (engine === '' || engine === 'docker') return undefined;
  if (engine !== 'kubernetes') {
    throw new InvalidArgumentError({
      argument: 'AI_TOOLBELT_SANDBOX_ENGINE',
      value: engine,
      message: 'must be `docker` (the default) or `kubernetes`',
    });
  }
  const namespace = env.AI_TOOLBELT_KUBERNETES_NAMESPACE || undefined;
  const runtimeClassName = env.AI_TOOLBELT_KUBERNETES_RUNTIME_CLASS || undefined;
  const agentSandbox = env.AI_TOOLBELT_KUBERNETES_AGENT_SANDBOX ?? '';
  if (!['', '0', '1'].includes(agentSandbox)) {
    throw new InvalidArgumentError({
      argument: 'AI_TOOLBELT_KUBERNETES_AGENT_SANDBOX',
      value: agentSandbox,
      message: 'must be `1` (take sandboxes through agent-sandbox) or `0`',
    });
  }
  return {
    ...(namespace === undefined ? {} : { namespace }),
    ...(runtimeClassName === undefined ? {} : { runtimeClassName }),
    ...(agentSandbox === '1' ? { agentSandbox: true as const } : {}),
  };
}
