import { SandboxUnavailableError } from '../../../errors/sandbox-unavailable-error.ts';
import { AGENT_SANDBOX_VERSION, EXTENSIONS_GROUP } from './agent-sandbox-api.ts';
import { statusOf, toKubeError } from '../kube-errors.ts';

/**
 * A failed agent-sandbox call as the sandbox's error: 404 (the cluster does not serve the
 * resources: no CRDs) is `agent-sandbox-unavailable` naming how to install them, 403 `forbidden`
 * naming the Role of docs/kubernetes/agent-sandbox-role.yaml; anything else as `toKubeError`.
 *
 * @example
 * ```ts
 * throw agentSandboxRefusal(error, { engine: 'kubernetes:sandbox', namespace: 'sandbox' });
 * ```
 */
export function agentSandboxRefusal(
  error: unknown,
  {
    engine,
    namespace,
  }: {
    /** The engine's name. */
    engine: string;
    /** Its namespace. */
    namespace: string;
  },
): unknown {
  const status = statusOf(error);
  if (status === 404) {
    return new SandboxUnavailableError({
      reason: 'agent-sandbox-unavailable',
      engine,
      message:
        `The cluster ${engine} does not serve agent-sandbox's ${EXTENSIONS_GROUP}/${AGENT_SANDBOX_VERSION} ` +
        'resources: install its CRDs and controller (here: `sudo bash scripts/setup-kubernetes.sh --agent-sandbox`; ' +
        'elsewhere the kubernetes-sigs/agent-sandbox release manifests with the extensions), or drop `agentSandbox`.',
      cause: error,
    });
  }
  if (status === 403) {
    return new SandboxUnavailableError({
      reason: 'forbidden',
      engine,
      statusCode: 403,
      message:
        `The cluster ${engine} refused an agent-sandbox call in namespace ${namespace}. ` +
        'Grant the Role of docs/kubernetes/agent-sandbox-role.yaml (sandboxtemplates, sandboxwarmpools: get, ' +
        'create; sandboxclaims: create, get, list, watch, delete) beside the sandbox Role.',
      cause: error,
    });
  }
  return toKubeError(error, { engine, namespace });
}
