import { createHash } from 'node:crypto';
import type { BoxSpec } from '../../driver/engine-driver.ts';
import { KIND_LABEL } from '../../driver/labels.ts';
import type { ResolvedKubernetesOptions } from '../../options/kubernetes-options.ts';
import { AGENT_SANDBOX_VERSION, EXTENSIONS_GROUP } from './agent-sandbox-api.ts';
import { podManifest } from '../pod-spec.ts';

/** The label of a claimed pod that names its SandboxClaim (what `remove` deletes). */
export const CLAIM_LABEL = 'ai-toolbelt.sandbox.claim';
/** The label of agent-sandbox's objects this engine made (templates, warm pools, claims). */
export const OBJECT_LABEL = 'ai-toolbelt.sandbox.agent-sandbox';

/** A box's SandboxTemplate and the SandboxWarmPool of it, both named `name`. */
export type AgentSandboxTemplate = {
  /** `ai-toolbelt-<kind>-<hash of the pod spec>`: alike boxes share one template and pool. */
  name: string;
  template: object;
  warmPool: object;
};

/**
 * The SandboxTemplate for boxes like `spec` and its SandboxWarmPool of `warmPoolSize`: the pod
 * template is exactly the engine's hardened pod (`podManifest`: gVisor RuntimeClass, non-root,
 * read-only root, no capabilities, RuntimeDefault seccomp, limits, a memory /tmp, no token, no
 * service links, `activeDeadlineSeconds`, never restarted) with the same command, so a warm pod
 * is the pod the engine would have made. Only labels that hold for every such pod go into the
 * template (its kind); the per-box ones (instance, expiry, scope) are set on the pod once a claim
 * binds it. No Service, and `networkPolicyManagement: Unmanaged`: agent-sandbox's managed
 * default policy would allow egress to the internet; the namespace's own deny-all policy holds.
 *
 * @example
 * ```ts
 * const { name, template, warmPool } = agentSandboxTemplate({ spec, options, warmPoolSize: 2 });
 * ```
 */
export function agentSandboxTemplate({
  spec,
  options,
  warmPoolSize,
}: {
  /** What the boxes run and their limits. */
  spec: BoxSpec;
  /** The engine's Kubernetes options. */
  options: ResolvedKubernetesOptions;
  /** Warm sandboxes the pool keeps. */
  warmPoolSize: number;
}): AgentSandboxTemplate {
  const pod = podManifest({
    name: 'template',
    spec: { ...spec, limits: { ...spec.limits, labels: {} } },
    options,
  });
  const hash = createHash('sha256')
    .update(JSON.stringify([pod.spec, spec.kind]))
    .digest('hex')
    .slice(0, 16);
  const name = `ai-toolbelt-${spec.kind}-${hash}`;
  const { namespace } = options;
  const apiVersion = `${EXTENSIONS_GROUP}/${AGENT_SANDBOX_VERSION}`;
  const labels = { [OBJECT_LABEL]: '1', [KIND_LABEL]: spec.kind };
  return {
    name,
    template: {
      apiVersion,
      kind: 'SandboxTemplate',
      metadata: { name, namespace, labels },
      spec: {
        podTemplate: { metadata: { labels: { [KIND_LABEL]: spec.kind } }, spec: pod.spec },
        service: false,
        networkPolicyManagement: 'Unmanaged',
      },
    },
    warmPool: {
      apiVersion,
      kind: 'SandboxWarmPool',
      metadata: { name, namespace, labels },
      spec: { replicas: warmPoolSize, sandboxTemplateRef: { name } },
    },
  };
}
