import { randomBytes } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import { DockerTimeoutError } from '../../../errors/docker-timeout-error.ts';
import { SandboxUnavailableError } from '../../../errors/sandbox-unavailable-error.ts';
import type { ResolvedKubernetesOptions } from '../../options/kubernetes-options.ts';
import {
  AGENT_SANDBOX_VERSION,
  type AgentSandboxObject,
  EXTENSIONS_GROUP,
  agentSandboxObjects,
} from './agent-sandbox-api.ts';
import { agentSandboxRefusal } from './agent-sandbox-errors.ts';
import { OBJECT_LABEL } from './agent-sandbox-template.ts';
import { type KubeClients, kubeCall } from '../kube-client.ts';
import { waitForObject } from '../object-waits.ts';
import { podState } from '../pod-state.ts';

// Ready=False reasons of a claim that waiting does not change.
const TERMINAL = new Set([
  'InvalidMetadata',
  'EnvVarsInjectionRejected',
  'VolumeClaimTemplatesError',
]);
// A bound sandbox whose pod already ended (a warm pod past its life, taken as a fallback).
const ENDED = new Set(['PodSucceeded', 'PodFailed', 'SandboxExpired', 'ClaimExpired']);
// The pool or its template is gone (deleted since this process made them): make them again.
const MISSING = new Set(['TemplateNotFound', 'WarmPoolNotFound']);

/**
 * A claim bound to a running pod, to a sandbox that had ended (`stale`: it was given back), or
 * not bound because its pool or template is gone (`missing`: it was given back).
 */
export type BoundClaim =
  { claim: string; pod: V1Pod } | { claim: string; stale: true } | { claim: string; missing: true };

/**
 * Creates a SandboxClaim on the warm pool `pool` (labelled with `labels`, its `shutdownTime` the
 * box's life and a minute) and waits, within `podStartTimeoutMs`, until the controller has bound
 * it to a Sandbox and reports it Ready; returns the claim and the Sandbox's pod (named as the
 * Sandbox). A claim the controller never touched is `agent-sandbox-unavailable` (not running);
 * one it could not bind (no template, no pool) says why; one still not Ready is a
 * `DockerTimeoutError` with the claim's condition. A claim that failed is deleted.
 *
 * @example
 * ```ts
 * const bound = await bindClaim({ clients, options, engine, apiTimeoutMs: 15_000, pool, labels, ttlMs: 600_000 });
 * ```
 */
export async function bindClaim({
  clients,
  options,
  engine,
  apiTimeoutMs,
  pool,
  labels,
  ttlMs,
  abortSignal,
}: {
  /** The cluster's clients. */
  clients: KubeClients;
  /** The engine's Kubernetes options (namespace, `podStartTimeoutMs`). */
  options: ResolvedKubernetesOptions;
  /** The engine's name, for errors. */
  engine: string;
  /** Deadline of each API call. */
  apiTimeoutMs: number;
  /** The SandboxWarmPool (and SandboxTemplate) name. */
  pool: string;
  /** The claim's labels (the box's). */
  labels: Record<string, string>;
  /** The box's life. */
  ttlMs: number;
  /** Stops the wait (and deletes the claim). */
  abortSignal?: AbortSignal | undefined;
}): Promise<BoundClaim> {
  const claim = `ai-toolbelt-claim-${randomBytes(6).toString('hex')}`;
  const { namespace, podStartTimeoutMs } = options;
  const objects = agentSandboxObjects({ clients, namespace, apiTimeoutMs });
  const unavailable = (message: string, cause?: unknown) =>
    new SandboxUnavailableError({
      ...{ reason: 'agent-sandbox-unavailable', engine, message },
      ...(cause === undefined ? {} : { cause }),
    });
  // Deleted before the failure is reported: nothing is left behind.
  const release = () =>
    objects.delete('sandboxclaims', claim).then(
      () => {},
      () => {
        // Gone already, or the claim's shutdownTime ends it.
      },
    );
  const shutdownTime = new Date(Date.now() + ttlMs + 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
  try {
    await objects.create('sandboxclaims', {
      apiVersion: `${EXTENSIONS_GROUP}/${AGENT_SANDBOX_VERSION}`,
      kind: 'SandboxClaim',
      metadata: { name: claim, namespace, labels: { ...labels, [OBJECT_LABEL]: '1' } },
      spec: {
        warmPoolRef: { name: pool },
        lifecycle: { shutdownTime, shutdownPolicy: 'Delete' },
      },
    });
  } catch (error) {
    // A create that timed out may still have made it; an answer did not.
    if (DockerTimeoutError.isInstance(error)) await release();
    throw agentSandboxRefusal(error, { engine, namespace });
  }
  let last: AgentSandboxObject | undefined;
  try {
    const sandbox = await waitForObject<
      { bound: string } | 'ended' | 'missing',
      AgentSandboxObject
    >({
      ...{ clients, name: claim, abortSignal, apiTimeoutMs },
      path: objects.path('sandboxclaims'),
      read: options =>
        clients.custom.getNamespacedCustomObject(
          {
            group: EXTENSIONS_GROUP,
            version: AGENT_SANDBOX_VERSION,
            namespace,
            plural: 'sandboxclaims',
            name: claim,
          },
          options,
        ),
      operation: 'sandbox claim',
      timeoutMs: podStartTimeoutMs,
      decide: found => {
        last = found;
        if (found === undefined)
          throw unavailable(`SandboxClaim ${claim} was deleted before it was bound.`);
        const ready = found.status?.conditions?.find(condition => condition.type === 'Ready');
        const name = found.status?.sandbox?.name;
        if (ready?.reason !== undefined && MISSING.has(ready.reason)) return { value: 'missing' };
        if (ready?.reason !== undefined && TERMINAL.has(ready.reason)) {
          throw unavailable(
            `SandboxClaim ${claim} on ${engine} cannot be bound: ${ready.reason}: ${ready.message ?? ''}`,
          );
        }
        if (name && ready?.reason !== undefined && ENDED.has(ready.reason))
          return { value: 'ended' };
        return name && ready?.status === 'True' ? { value: { bound: name } } : undefined;
      },
    });
    if (typeof sandbox === 'string') {
      await release();
      return sandbox === 'ended' ? { claim, stale: true } : { claim, missing: true };
    }
    const pod = await kubeCall({
      operation: 'pod get',
      timeoutMs: apiTimeoutMs,
      call: options => clients.core.readNamespacedPod({ name: sandbox.bound, namespace }, options),
    });
    if (podState(pod).running) return { claim, pod };
    await release();
    return { claim, stale: true };
  } catch (error) {
    await release();
    if (!DockerTimeoutError.isInstance(error) || error.operation !== 'sandbox claim') throw error;
    const ready = last?.status?.conditions?.find(condition => condition.type === 'Ready');
    if (ready === undefined) {
      throw unavailable(
        `The agent-sandbox controller did not act on SandboxClaim ${claim} within ${podStartTimeoutMs} ms: it is not running ` +
          '(or does not run its extensions). Start it: here `sudo bash scripts/setup-kubernetes.sh --agent-sandbox`; ' +
          'elsewhere the agent-sandbox-controller Deployment with `--extensions`.',
        error,
      );
    }
    throw new DockerTimeoutError({
      operation: `sandbox claim (${claim}: ${ready.reason ?? ''}: ${ready.message ?? ''})`,
      ...{ timeoutMs: podStartTimeoutMs, engine, kind: 'kubernetes' },
    });
  }
}
