import { DockerTimeoutError } from '../../errors/docker-timeout-error.ts';
import { SandboxUnavailableError } from '../../errors/sandbox-unavailable-error.ts';
import type { BoxStream } from '../driver/box-stream.ts';
import type {
  BoxFilter,
  BoxInfo,
  BoxSpec,
  BoxState,
  ContainerLimits,
  EngineCheck,
  EngineDriver,
  SharedRecord,
} from '../driver/engine-driver.ts';
import {
  INSTANCE_LABEL,
  KIND_LABEL,
  POOL_LABEL,
  SANDBOX_LABEL,
  SCOPE_LABEL,
} from '../driver/labels.ts';
import type { ResolvedKubernetesOptions } from '../options/kubernetes-options.ts';
import { AgentSandboxClaims } from './agent-sandbox/agent-sandbox-claims.ts';
import { checkCluster } from './check-cluster.ts';
import { type CallOptions, type KubeClients, kubeCall, kubeClients } from './kube-client.ts';
import { isKubeGone, isKubeTransportError, toKubeError } from './kube-errors.ts';
import { waitForPod } from './object-waits.ts';
import { LeaseRecord } from './lease-record.ts';
import { claimPod } from './pod-claims.ts';
import { CONTAINER, podManifest, podName } from './pod-spec.ts';
import { startPod } from './pod-start.ts';
import { podInfo, podState } from './pod-state.ts';
import { attachPod } from './pod-stream.ts';

// Exit 128 + SIGKILL, as an OOM kill reports it.
const SIGKILL_EXIT = 137;
// How long a state asked for after a box's stream ended may wait for the kubelet to record it.
const SETTLE_MS = 5_000;

/** A "not there" answer of our own making (a pod gone while waited on), read as gone. */
function gone(name: string): Error {
  return Object.assign(new Error(`pod ${name} is gone`), { code: 404 });
}

/**
 * A Kubernetes cluster as an `EngineDriver`: each box is a hardened pod under the gVisor
 * RuntimeClass (see `podManifest`) in one namespace, created and watched through the API server,
 * attached over its WebSocket (`pods/attach`, v5), killed and removed by deletion, listed by
 * label. A pod is attached once it runs, so what it wrote before is read from its log
 * (`earlyOutput`). Every API call has the engine's deadline; a pod's start has
 * `podStartTimeoutMs`. The client library is loaded on first use. With `agentSandbox` the pods
 * are taken through SandboxClaims of kubernetes-sigs/agent-sandbox and given back by deleting
 * the claim (`AgentSandboxClaims`); everything else about a pod is the same.
 *
 * @example
 * ```ts
 * const driver = new KubernetesDriver({ name: 'kubernetes:sandbox', kubernetes, image, limits, unsafeAllowRuncRuntime: false, apiTimeoutMs: 15_000 });
 * await driver.check({});
 * ```
 */
export class KubernetesDriver implements EngineDriver {
  readonly kind = 'kubernetes';
  readonly streamsFromStart = false;
  readonly name: string;
  /** With agent-sandbox, its SandboxWarmPools are the warm pools: the sandbox keeps none. */
  readonly keepsWarmPool: boolean;
  /**
   * Sets labels of a listed pod by one conditional update (absent with agent-sandbox: its
   * controller hands out the pods).
   */
  readonly claim?: (box: BoxInfo, labels: Record<string, string | null>) => Promise<boolean>;
  /** Starts a pod without attaching (absent with agent-sandbox, as `claim`). */
  readonly createBox?: (
    spec: BoxSpec,
    options: Parameters<EngineDriver['startBox']>[1],
  ) => Promise<string>;
  private readonly agentSandbox: AgentSandboxClaims | undefined;
  private readonly options: ResolvedKubernetesOptions;
  private readonly image: string;
  private readonly limits: Omit<ContainerLimits, 'runtime' | 'labels' | 'egress'>;
  private readonly unsafeAllowRuncRuntime: boolean;
  private readonly apiTimeoutMs: number;
  private connecting: Promise<KubeClients> | undefined;

  constructor({
    name,
    kubernetes,
    limits,
    unsafeAllowRuncRuntime,
    apiTimeoutMs,
  }: {
    /** The engine's name in errors. */
    name: string;
    /** Its cluster, namespace and RuntimeClass. */
    kubernetes: ResolvedKubernetesOptions;
    /** The sandbox's image and limits (for the dry run of the check). */
    limits: Omit<ContainerLimits, 'runtime' | 'labels' | 'egress'>;
    /** Accept a RuntimeClass that is not gVisor (development only). */
    unsafeAllowRuncRuntime: boolean;
    /** Deadline of each API call (`dockerTimeoutMs`). */
    apiTimeoutMs: number;
  }) {
    this.name = name;
    this.options = kubernetes;
    this.image = limits.image;
    this.limits = limits;
    this.unsafeAllowRuncRuntime = unsafeAllowRuncRuntime;
    this.apiTimeoutMs = apiTimeoutMs;
    this.keepsWarmPool = kubernetes.agentSandbox !== undefined;
    this.agentSandbox = this.keepsWarmPool
      ? new AgentSandboxClaims({
          clients: () => this.clients(),
          options: kubernetes,
          engine: name,
          apiTimeoutMs,
        })
      : undefined;
    if (this.agentSandbox === undefined) {
      this.claim = (box, labels) => this.relabel(box, labels);
      this.createBox = (spec, options) => this.makePod(spec, options);
    }
  }

  /** The namespace of the pods. */
  get namespace(): string {
    return this.options.namespace;
  }

  /** The cluster's clients (loaded and connected once; a failure is tried again next time). */
  clients(): Promise<KubeClients> {
    this.connecting ??= kubeClients(this.options).catch((error: unknown) => {
      this.connecting = undefined;
      throw new SandboxUnavailableError({
        reason: 'cluster-unreachable',
        engine: this.name,
        message:
          `No usable kubeconfig for ${this.name} (${error instanceof Error ? error.message : String(error)}). ` +
          'Set KUBECONFIG or `kubernetes.kubeconfig`, or run the app in the cluster with a service account.',
        cause: error,
      });
    });
    return this.connecting;
  }

  private async call<T>(
    operation: string,
    run: (clients: KubeClients, options: CallOptions) => Promise<T>,
  ): Promise<T> {
    const clients = await this.clients();
    return kubeCall({
      operation,
      timeoutMs: this.apiTimeoutMs,
      call: options => run(clients, options),
    });
  }

  async ping(): Promise<void> {
    await this.call('version', ({ version }, options) => version.getCode(options));
  }

  async check(): Promise<EngineCheck> {
    const { runtimeClassName, namespace } = this.options;
    const probe = podManifest({
      name: podName('execute'),
      spec: {
        limits: { ...this.limits, runtime: runtimeClassName },
        ...{ cmd: ['true'], ttlMs: 60_000, kind: 'execute', stdinOnce: true, init: false },
      },
      options: this.options,
    });
    await checkCluster({
      ...{ clients: await this.clients(), engine: this.name, namespace, runtimeClassName, probe },
      ...{ apiTimeoutMs: this.apiTimeoutMs, unsafeAllowRuncRuntime: this.unsafeAllowRuncRuntime },
    });
    await this.agentSandbox?.check();
    return { runtime: runtimeClassName };
  }

  async startBox(
    spec: BoxSpec,
    options: Parameters<EngineDriver['startBox']>[1],
  ): Promise<{ id: string; stream: BoxStream }> {
    const name = await this.makePod(spec, options);
    try {
      return { id: name, stream: await this.attach(name) };
    } catch (error) {
      void options.cleanup.remove(name);
      throw error;
    }
  }

  /** A running pod for `spec`: made by the engine, or taken by a SandboxClaim. */
  private async makePod(
    spec: BoxSpec,
    { cleanup, abortSignal }: Parameters<EngineDriver['startBox']>[1],
  ): Promise<string> {
    if (this.agentSandbox !== undefined)
      return await this.agentSandbox.start(spec, { abortSignal });
    return await startPod({
      ...{ clients: await this.clients(), options: this.options, spec, engine: this.name },
      ...{ apiTimeoutMs: this.apiTimeoutMs, cleanup, abortSignal },
    });
  }

  private async relabel(box: BoxInfo, labels: Record<string, string | null>): Promise<boolean> {
    return await claimPod({
      ...{ clients: await this.clients(), namespace: this.options.namespace, box, labels },
      apiTimeoutMs: this.apiTimeoutMs,
    });
  }

  sharedRecord(name: string): SharedRecord {
    return new LeaseRecord({
      clients: () => this.clients(),
      namespace: this.options.namespace,
      name,
      apiTimeoutMs: this.apiTimeoutMs,
    });
  }

  async attach(id: string): Promise<BoxStream> {
    const clients = await this.clients();
    return await attachPod({
      clients,
      namespace: this.options.namespace,
      name: id,
      engine: this.name,
    });
  }

  async earlyOutput(id: string): Promise<Buffer> {
    const { namespace } = this.options;
    const text = await this.call('pod log', ({ core }, options) =>
      core.readNamespacedPodLog({ name: id, namespace, container: CONTAINER }, options),
    );
    return Buffer.from(text, 'utf8');
  }

  async state(id: string, { settle = false } = {}): Promise<BoxState | undefined> {
    const { namespace } = this.options;
    const read = () =>
      this.call('pod get', ({ core }, options) =>
        core.readNamespacedPod({ name: id, namespace }, options),
      ).then(podState, (error: unknown) => {
        if (isKubeGone(error)) return undefined;
        throw error;
      });
    const state = await read();
    if (!settle || state === undefined) return state;
    if (!state.running && (state.exitCode !== SIGKILL_EXIT || state.oomKilled)) return state;
    // Asked after its stream ended, a pod may still show running (the kubelet sees an exit at
    // its next relist, about a second later) and an OOM kill may follow its exit: wait for both.
    const settled = (found: BoxState) =>
      !found.running && (found.exitCode !== SIGKILL_EXIT || found.oomKilled);
    return await waitForPod({
      ...{ clients: await this.clients(), namespace, name: id },
      ...{ operation: 'pod exit', timeoutMs: SETTLE_MS, apiTimeoutMs: this.apiTimeoutMs },
      decide: pod => {
        const found = pod === undefined ? undefined : podState(pod);
        return found === undefined || settled(found) ? { value: found } : undefined;
      },
    }).catch((error: unknown) => {
      if (DockerTimeoutError.isInstance(error)) return read();
      throw error;
    });
  }

  async waitExit(id: string, abortSignal: AbortSignal): Promise<number> {
    return await waitForPod({
      ...{ clients: await this.clients(), namespace: this.options.namespace, name: id },
      ...{ operation: 'pod exit', timeoutMs: Number.POSITIVE_INFINITY, abortSignal },
      apiTimeoutMs: this.apiTimeoutMs,
      decide: pod => {
        if (pod === undefined) throw gone(id);
        const { exitCode } = podState(pod);
        return exitCode === null ? undefined : { value: exitCode };
      },
    });
  }

  async kill(id: string): Promise<void> {
    // No kill without deletion on Kubernetes: the kubelet stops the pod within its 1 s grace.
    await this.end(id);
  }

  async remove(id: string): Promise<void> {
    await this.end(id);
    try {
      await waitForPod({
        ...{ clients: await this.clients(), namespace: this.options.namespace, name: id },
        ...{ operation: 'pod removal', timeoutMs: 2 * this.apiTimeoutMs },
        apiTimeoutMs: this.apiTimeoutMs,
        decide: pod => (pod === undefined ? { value: true } : undefined),
      });
    } catch (error) {
      if (isKubeTransportError(error)) throw error;
      // Its node does not confirm (down?): the kubelet ends what is left when it is back.
      await this.delete(id, 0);
    }
  }

  /** Deletes the pod, or (agent-sandbox) the claim it was taken by. */
  private async end(id: string): Promise<void> {
    if (this.agentSandbox !== undefined && (await this.agentSandbox.release(id))) return;
    await this.delete(id, 1);
  }

  private async delete(id: string, gracePeriodSeconds: number): Promise<void> {
    const { namespace } = this.options;
    try {
      await this.call('pod delete', ({ core }, options) =>
        core.deleteNamespacedPod({ name: id, namespace, gracePeriodSeconds }, options),
      );
    } catch (error) {
      if (!isKubeGone(error)) throw error;
    }
  }

  async list({ instanceId, scope, kind, live = false, pool }: BoxFilter): Promise<BoxInfo[]> {
    const selector = [`${SANDBOX_LABEL}=1`];
    if (instanceId !== undefined) selector.push(`${INSTANCE_LABEL}=${instanceId}`);
    if (pool !== undefined) selector.push(`${POOL_LABEL}=${pool}`);
    if (scope !== undefined) selector.push(`${SCOPE_LABEL}=${scope}`);
    if (kind !== undefined) selector.push(`${KIND_LABEL}=${kind}`);
    const { namespace } = this.options;
    const list = await this.call('pod list', ({ core }, options) =>
      core.listNamespacedPod({ namespace, labelSelector: selector.join(',') }, options),
    );
    const boxes = list.items.map(podInfo);
    // A pod being deleted still runs on its node: it counts as live until it is gone.
    return live ? boxes.filter(box => box.state !== 'exited') : boxes;
  }

  toError(error: unknown, { inFlight = false }: { inFlight?: boolean } = {}): unknown {
    return toKubeError(error, { engine: this.name, namespace: this.options.namespace, inFlight });
  }

  isTransportError(error: unknown): boolean {
    return isKubeTransportError(error);
  }

  isGone(error: unknown): boolean {
    return isKubeGone(error);
  }

  knownId(): boolean {
    // Pods are named before they are made.
    return true;
  }
}
