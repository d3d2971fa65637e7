// agent-sandbox/: runs and interpreters of a Kubernetes engine taken by SandboxClaims of
// kubernetes-sigs/agent-sandbox: the template and warm pool, claims, binding and refusals.
import type { V1Pod } from '@kubernetes/client-node';
import { SandboxUnavailableError } from '../../../errors/sandbox-unavailable-error.ts';
import type { BoxSpec } from '../../driver/engine-driver.ts';
import { EXPIRES_LABEL } from '../../driver/labels.ts';
import type { ResolvedKubernetesOptions } from '../../options/kubernetes-options.ts';
import { AGENT_SANDBOX_ACCESS, agentSandboxObjects } from './agent-sandbox-api.ts';
import { bindClaim } from './agent-sandbox-bind.ts';
import { agentSandboxRefusal } from './agent-sandbox-errors.ts';
import {
  type AgentSandboxTemplate,
  CLAIM_LABEL,
  OBJECT_LABEL,
  agentSandboxTemplate,
} from './agent-sandbox-template.ts';
import { deniedAccess } from '../check-cluster.ts';
import { type KubeClients, kubeCall } from '../kube-client.ts';
import { isKubeGone, statusOf } from '../kube-errors.ts';
import { claimPod } from '../pod-claims.ts';
import { podManifest } from '../pod-spec.ts';
import { podInfo } from '../pod-state.ts';

// Claims for one box before giving up on warm pods that are too old or ended.
const ATTEMPTS = 3;

/**
 * Boxes taken through kubernetes-sigs/agent-sandbox: for a box like `spec`, the engine makes
 * (once, if missing) a SandboxTemplate of its hardened pod and a SandboxWarmPool of it
 * (`agentSandboxTemplate`), then creates a SandboxClaim on the pool and waits until it is bound
 * and Ready: the controller hands the claim one warm Sandbox (its owner becomes the claim, by an
 * optimistic-lock update, so two claims never get the same one) or makes one cold. The pod is
 * named as its Sandbox; it is labelled as the engine's own pods are (instance, kind, expiry,
 * plus the claim's name), so listing, attaching, sweeps and bounds work unchanged. Releasing
 * deletes the claim; the cluster's garbage collector deletes its Sandbox and pod. A claim
 * carries `shutdownTime` (the box's life and a minute): the controller deletes it then even when
 * every replica is gone.
 *
 * @example
 * ```ts
 * const boxes = new AgentSandboxClaims({ clients, options, engine: 'kubernetes:sandbox', apiTimeoutMs: 15_000 });
 * const pod = await boxes.start(spec);
 * await boxes.release(pod);
 * ```
 */
export class AgentSandboxClaims {
  private readonly clients: () => Promise<KubeClients>;
  private readonly options: ResolvedKubernetesOptions;
  private readonly warmPoolSize: number;
  private readonly engine: string;
  private readonly apiTimeoutMs: number;
  private readonly ensured = new Map<string, Promise<void>>();

  constructor({
    clients,
    options,
    engine,
    apiTimeoutMs,
  }: {
    /** The cluster's clients (connected on first use). */
    clients: () => Promise<KubeClients>;
    /** The engine's Kubernetes options (with `agentSandbox`). */
    options: ResolvedKubernetesOptions;
    /** The engine's name, for errors. */
    engine: string;
    /** Deadline of each API call. */
    apiTimeoutMs: number;
  }) {
    this.clients = clients;
    this.options = options;
    this.warmPoolSize = options.agentSandbox?.warmPoolSize ?? 2;
    this.engine = engine;
    this.apiTimeoutMs = apiTimeoutMs;
  }

  private async objects() {
    const { namespace } = this.options;
    return agentSandboxObjects({
      clients: await this.clients(),
      namespace,
      apiTimeoutMs: this.apiTimeoutMs,
    });
  }

  private refusal(error: unknown): unknown {
    return agentSandboxRefusal(error, { engine: this.engine, namespace: this.options.namespace });
  }

  /**
   * The CRDs are served (a listing of claims answers) and the app may do what it does with them
   * in its namespace (an access review per verb); typed errors otherwise.
   */
  async check(): Promise<void> {
    const objects = await this.objects();
    await objects.list('sandboxclaims', `${OBJECT_LABEL}=1`).catch((error: unknown) => {
      throw this.refusal(error);
    });
    const { namespace } = this.options;
    const denied = await deniedAccess({
      ...{ clients: await this.clients(), namespace, apiTimeoutMs: this.apiTimeoutMs },
      needed: AGENT_SANDBOX_ACCESS,
    });
    if (denied.length > 0) {
      throw new SandboxUnavailableError({
        reason: 'forbidden',
        engine: this.engine,
        statusCode: 403,
        message:
          `The sandbox may not ${denied.join(', ')} in namespace ${namespace} on ${this.engine}. Grant the ` +
          "app's service account the Role of docs/kubernetes/agent-sandbox-role.yaml beside the sandbox Role.",
      });
    }
  }

  /** Makes the template and its warm pool unless they exist (once per process and name). */
  private ensure(made: AgentSandboxTemplate): Promise<void> {
    let done = this.ensured.get(made.name);
    if (done === undefined) {
      done = this.createIfMissing(made).catch((error: unknown) => {
        this.ensured.delete(made.name);
        throw this.refusal(error);
      });
      this.ensured.set(made.name, done);
    }
    return done;
  }

  private async createIfMissing({ name, template, warmPool }: AgentSandboxTemplate): Promise<void> {
    const objects = await this.objects();
    // Its name is the hash of what it holds: one that exists is this one (an admin may have
    // made it, with the pool's size of their choice).
    for (const [plural, body] of [
      ['sandboxtemplates', template],
      ['sandboxwarmpools', warmPool],
    ] as const) {
      const found = await objects.get(plural, name).catch((error: unknown) => {
        if (isKubeGone(error)) return undefined;
        throw error;
      });
      if (found !== undefined) continue;
      await objects.create(plural, body).catch((error: unknown) => {
        if (statusOf(error) !== 409) throw error;
      });
    }
  }

  /**
   * A running pod for `spec`, taken by a claim on its warm pool; its name. A warm pod past half
   * its life (its TTL runs from its own start) or already ended is given back and another
   * claimed (the pool makes fresh ones).
   */
  async start(
    spec: BoxSpec,
    { abortSignal }: { abortSignal?: AbortSignal | undefined } = {},
  ): Promise<string> {
    const made = agentSandboxTemplate({
      spec,
      options: this.options,
      warmPoolSize: this.warmPoolSize,
    });
    await this.ensure(made);
    const labels = podManifest({ name: 'claimed', spec, options: this.options }).metadata!.labels!;
    for (let attempt = 1; ; attempt++) {
      const bound = await bindClaim({
        ...{ clients: await this.clients(), options: this.options, engine: this.engine },
        ...{
          apiTimeoutMs: this.apiTimeoutMs,
          pool: made.name,
          labels,
          ttlMs: spec.ttlMs,
          abortSignal,
        },
      });
      if ('missing' in bound) {
        // Deleted since this process made them (an admin's clean-up): made again, claimed again.
        this.ensured.delete(made.name);
        await this.ensure(made);
        if (attempt < ATTEMPTS) continue;
      }
      if (!('pod' in bound)) {
        if (attempt < ATTEMPTS) continue;
        throw new SandboxUnavailableError({
          reason: 'engine-error',
          engine: this.engine,
          message:
            `${ATTEMPTS} claims on SandboxWarmPool ${made.name} of ${this.engine} got no fresh sandbox (ended, past half ` +
            'their life, or the pool was deleted meanwhile); try again once it has fresh ones.',
        });
      }
      const { claim, pod } = bound;
      const createdMs = new Date(pod.metadata?.creationTimestamp ?? Date.now()).getTime();
      if (Date.now() - createdMs > spec.ttlMs / 2 && attempt < ATTEMPTS) {
        await this.deleteClaim(claim).catch(() => {});
        continue;
      }
      const name = pod.metadata!.name!;
      try {
        await this.label(pod, {
          ...labels,
          [EXPIRES_LABEL]: String(createdMs + spec.ttlMs),
          [CLAIM_LABEL]: claim,
        });
      } catch (error) {
        await this.deleteClaim(claim).catch(() => {});
        throw error;
      }
      return name;
    }
  }

  /** Sets the engine's labels on a claimed pod (one conditional update; read again on 409). */
  private async label(pod: V1Pod, labels: Record<string, string>): Promise<void> {
    const clients = await this.clients();
    const { namespace } = this.options;
    let current = pod;
    for (let attempt = 0; attempt < 5; attempt++) {
      const box = podInfo(current);
      if (await claimPod({ clients, namespace, box, labels, apiTimeoutMs: this.apiTimeoutMs }))
        return;
      current = await kubeCall({
        operation: 'pod get',
        timeoutMs: this.apiTimeoutMs,
        call: options => clients.core.readNamespacedPod({ name: box.id, namespace }, options),
      });
    }
    throw new SandboxUnavailableError({
      reason: 'engine-error',
      engine: this.engine,
      message: `The claimed pod ${pod.metadata?.name} on ${this.engine} kept changing; its labels could not be set.`,
    });
  }

  private async deleteClaim(claim: string): Promise<void> {
    const objects = await this.objects();
    await objects.delete('sandboxclaims', claim).catch((error: unknown) => {
      if (!isKubeGone(error)) throw error;
    });
  }

  /**
   * Gives back the pod `id` taken by a claim: deletes its claim (the garbage collector deletes
   * its Sandbox and pod; deleting the pod alone would make its Sandbox start another). False
   * when the pod is not one this engine claimed (the caller deletes it as usual).
   */
  async release(id: string): Promise<boolean> {
    const clients = await this.clients();
    const { namespace } = this.options;
    let pod: V1Pod;
    try {
      pod = await kubeCall({
        operation: 'pod get',
        timeoutMs: this.apiTimeoutMs,
        call: options => clients.core.readNamespacedPod({ name: id, namespace }, options),
      });
    } catch (error) {
      if (isKubeGone(error)) return true;
      throw error;
    }
    const claim = pod.metadata?.labels?.[CLAIM_LABEL];
    if (claim === undefined) return false;
    await this.deleteClaim(claim);
    return true;
  }
}
