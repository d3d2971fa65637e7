import { type KubeClients, kubeCall } from '../kube-client.ts';

/** The API group of agent-sandbox's extensions (SandboxTemplate, SandboxClaim, SandboxWarmPool). */
export const EXTENSIONS_GROUP = 'extensions.agents.x-k8s.io';
/** The version of its API that v1.0.1 serves. */
export const AGENT_SANDBOX_VERSION = 'v1beta1';

/** What the engine does with agent-sandbox's resources (docs/kubernetes/agent-sandbox-role.yaml). */
export const AGENT_SANDBOX_ACCESS = [
  {
    group: EXTENSIONS_GROUP,
    resource: 'sandboxtemplates',
    verbs: ['get', 'create'],
  },
  { group: EXTENSIONS_GROUP, resource: 'sandboxwarmpools', verbs: ['get', 'create'] },
  {
    group: EXTENSIONS_GROUP,
    resource: 'sandboxclaims',
    verbs: ['create', 'get', 'list', 'watch', 'delete'],
  },
];

/** The resources of agent-sandbox this engine uses. */
export type AgentSandboxPlural = 'sandboxtemplates' | 'sandboxwarmpools' | 'sandboxclaims';

/** What this engine reads of a custom object: its metadata, and a claim's status. */
export type AgentSandboxObject = {
  metadata?: {
    name?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
  };
  spec?: Record<string, unknown>;
  status?: {
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
    sandbox?: { name?: string };
    readyReplicas?: number;
  };
};

/**
 * agent-sandbox's objects of one namespace through the API server (the custom-objects client),
 * each call with its deadline: create, get, list by label, delete, and the path a watch follows.
 *
 * @example
 * ```ts
 * const objects = agentSandboxObjects({ clients, namespace: 'sandbox', apiTimeoutMs: 15_000 });
 * const claim = await objects.get('sandboxclaims', 'ai-toolbelt-claim-0a1b2c');
 * ```
 */
export function agentSandboxObjects({
  clients,
  namespace,
  apiTimeoutMs,
}: {
  /** The cluster's clients. */
  clients: KubeClients;
  /** The sandbox's namespace. */
  namespace: string;
  /** Deadline of each call. */
  apiTimeoutMs: number;
}) {
  const group = EXTENSIONS_GROUP;
  const version = AGENT_SANDBOX_VERSION;
  const call = <T>(operation: string, run: Parameters<typeof kubeCall<T>>[0]['call']) =>
    kubeCall({ operation, timeoutMs: apiTimeoutMs, call: run });
  return {
    create: (plural: AgentSandboxPlural, body: object): Promise<AgentSandboxObject> =>
      call(`${plural} create`, options =>
        clients.custom.createNamespacedCustomObject(
          { group, version, namespace, plural, body },
          options,
        ),
      ),
    get: (plural: AgentSandboxPlural, name: string): Promise<AgentSandboxObject> =>
      call(`${plural} get`, options =>
        clients.custom.getNamespacedCustomObject(
          { group, version, namespace, plural, name },
          options,
        ),
      ),
    list: (
      plural: AgentSandboxPlural,
      labelSelector?: string,
    ): Promise<{ items: AgentSandboxObject[] }> =>
      call(`${plural} list`, options =>
        clients.custom.listNamespacedCustomObject(
          { group, version, namespace, plural, ...(labelSelector ? { labelSelector } : {}) },
          options,
        ),
      ),
    /** Deletes `name`; `Foreground`: it stays (deleting) until its sandbox and pod are gone. */
    delete: (
      plural: AgentSandboxPlural,
      name: string,
      propagationPolicy: 'Foreground' | 'Background' = 'Background',
    ): Promise<unknown> =>
      call(`${plural} delete`, options =>
        clients.custom.deleteNamespacedCustomObject(
          { group, version, namespace, plural, name, propagationPolicy },
          options,
        ),
      ),
    /** The collection's path, for `clients.watch`. */
    path: (plural: AgentSandboxPlural): string =>
      `/apis/${group}/${version}/namespaces/${encodeURIComponent(namespace)}/${plural}`,
  };
}

/** `agentSandboxObjects`' answer. */
export type AgentSandboxObjects = ReturnType<typeof agentSandboxObjects>;
