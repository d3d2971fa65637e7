// engines/: the engines a sandbox runs on (Docker or Kubernetes, each behind its EngineDriver): one
// engine's health, checks and sweeps, the set that places work, a fleet run.
import { SandboxUnavailableError } from '../../errors/sandbox-unavailable-error.ts';
import { CleanupTracker } from '../driver/cleanup-tracker.ts';
import type { ContainerLimits, EngineDriver } from '../driver/engine-driver.ts';
import type { EgressGateway } from '../egress/egress-gateway.ts';
import type { ResolvedDockerSandboxOptions } from '../options/docker-sandbox-options.ts';
import type { SandboxNetworkUsage } from '../types.ts';
import { INSTANCE_LABEL, SCOPE_LABEL } from '../driver/labels.ts';
import type { SandboxContainer } from '../run/sandbox-container.ts';
import { removeInstanceContainers, sweepExpiredQuietly } from './engine-sweeps.ts';
import { ProbeLoop } from './engine-health.ts';
import type { EngineLink, SandboxEngineStatus } from './engine-types.ts';
import { type RunPool, createRunPool } from './run-pool.ts';
import { PendingWork } from '../../util/pending-work.ts';

/**
 * One engine of a sandbox (its `EngineDriver` talks to Docker or Kubernetes): health (a ping every `healthCheckIntervalMs` while up;
 * with back-off while down), a warm pool per admission (an engine that comes back gets a
 * new pool; containers from before are discarded), background removals (retried once the
 * engine is back when it did not answer), and the sweeps: expired containers of anyone, and
 * this instance's own leftovers when it is admitted again and when it closes.
 */
export class Engine implements EngineLink {
  readonly name: string;
  /** How this engine's boxes are made, reached and removed. */
  readonly driver: EngineDriver;
  readonly cleanup: CleanupTracker;
  state: SandboxEngineStatus['state'] = 'starting';
  lastError: unknown;
  runtime: string | undefined;
  /** The image's Python distributions (its `ai-toolbelt.packages` label), once admitted. */
  packages: string[] | undefined;
  limits: ContainerLimits | undefined;
  inFlight = 0;
  sessions = 0;
  runs = 0;
  private pool: RunPool | undefined;
  private readonly closingPools = new PendingWork();
  private readonly deferred = new Set<string>();
  private readonly lossListeners = new Set<(error: Error) => void>();
  private readonly options: ResolvedDockerSandboxOptions;
  private readonly instanceId: string;
  private readonly onStateChange: (engine: Engine) => void;
  /** The sandbox's egress gateway, when it has a policy (results read their network use there). */
  readonly egress: EgressGateway | undefined;
  private readonly probes: ProbeLoop;
  private lastSweep = 0;
  private admissions = 0;
  private closing: Promise<{ id: string; cause: unknown }[]> | undefined;

  constructor({
    driver,
    options,
    instanceId,
    onStateChange,
    egress,
  }: {
    /** The engine's driver (Docker or Kubernetes). */
    driver: EngineDriver;
    /** The sandbox's options. */
    options: ResolvedDockerSandboxOptions;
    /** Labels every container this engine makes for the sandbox. */
    instanceId: string;
    /** Told when the engine goes up or down. */
    onStateChange: (engine: Engine) => void;
    /** The sandbox's egress, when it has a policy. */
    egress?: EgressGateway | undefined;
  }) {
    this.name = driver.name;
    this.driver = driver;
    this.options = options;
    this.instanceId = instanceId;
    this.onStateChange = onStateChange;
    this.egress = egress;
    this.cleanup = new CleanupTracker({
      engine: driver,
      onCleanupError: options.onCleanupError,
      onDeferred: id => this.defer(id),
    });
    this.probes = new ProbeLoop({
      intervalMs: options.healthCheckIntervalMs,
      probe: () => this.runProbe(),
      isUp: () => this.state === 'up',
      afterProbe: () => this.periodic(),
    });
  }

  /** Checks and admits the engine; on failure it stays down and the typed error is thrown. */
  async start(): Promise<void> {
    try {
      await this.admit();
    } catch (error) {
      this.lastError = this.driver.toError(error);
      if (this.state !== 'closed') this.state = 'down';
      throw this.lastError;
    }
  }

  /** Starts the health probes (and periodic sweeps); timers never keep the process alive. */
  startMonitoring(): void {
    this.probes.start();
  }

  /** Idle warm containers. */
  get warmCount(): number {
    return this.pool?.idleCount ?? 0;
  }

  /** Idle warm containers whose pre-imports are done. */
  get warmReadyCount(): number {
    return this.pool?.readyCount ?? 0;
  }

  /** A started container for one run; dead warm ones are discarded on the way. */
  async takeContainer(abortSignal: AbortSignal): Promise<SandboxContainer> {
    for (let discarded = 0; discarded < 3; discarded++) {
      const pool = this.pool;
      if (pool === undefined || this.state !== 'up') throw this.unavailable();
      const container = await pool.acquire(abortSignal);
      if (container.alive) return container;
      container.discard(this.cleanup);
    }
    throw this.unavailable();
  }

  toError(error: unknown, { inFlight = false }: { inFlight?: boolean } = {}): unknown {
    if (this.driver.isTransportError(error) && this.state === 'up') void this.probe();
    return this.driver.toError(error, { inFlight });
  }

  /**
   * With egress: the network use of an interpreter this process serves, taking its proxy over
   * when the process that started it is gone (undefined without egress).
   */
  async adoptEgress(id: string): Promise<(() => SandboxNetworkUsage) | undefined> {
    return await this.driver.adoptEgress?.(id, this.cleanup);
  }

  /** Removes a box (in the background; see `CleanupTracker#remove`). */
  remove(id: string): Promise<void> {
    return this.cleanup.remove(id);
  }

  onLost(listener: (error: Error) => void): () => void {
    this.lossListeners.add(listener);
    return () => void this.lossListeners.delete(listener);
  }

  /** The error for work that cannot be placed on this engine now. */
  unavailable(): unknown {
    if (this.lastError !== undefined && this.state === 'down') return this.lastError;
    return new SandboxUnavailableError({
      reason: this.driver.kind === 'docker' ? 'docker-unreachable' : 'cluster-unreachable',
      engine: this.name,
      message: `The ${this.driver.kind === 'docker' ? 'Docker engine' : 'Kubernetes cluster'} ${this.name} is ${this.state === 'closed' ? 'closed' : 'not answering'}.`,
    });
  }

  /**
   * Pings the engine now (coalesced with a probe in flight): a down engine that answers is
   * admitted again, an up engine that does not is taken out. Resolves with "is up".
   */
  probe(): Promise<boolean> {
    return this.state === 'closed' ? Promise.resolve(false) : this.probes.now();
  }

  /** Like `probe`, but answers from a probe that ended in the last 200 ms. */
  probeSoon(): Promise<boolean> {
    return this.state === 'closed' ? Promise.resolve(false) : this.probes.soon();
  }

  private ping(): Promise<void> {
    return this.driver.ping();
  }

  private async runProbe(): Promise<boolean> {
    if (this.state === 'up') {
      try {
        await this.ping();
        return true;
      } catch {
        // One retry tells a blip (a busy engine) from an outage.
        await new Promise(resolve => setTimeout(resolve, 200));
      }
      try {
        await this.ping();
        return true;
      } catch (error) {
        this.markDown(error);
        return false;
      }
    }
    if (this.state !== 'down') return false;
    try {
      await this.ping();
      await this.admit();
      return true;
    } catch (error) {
      this.lastError = this.driver.toError(error);
      return false;
    }
  }

  private async periodic(): Promise<void> {
    if (this.state === 'up') this.driver.onUp?.(true, this.cleanup);
    if (this.state === 'up' && Date.now() - this.lastSweep >= this.options.sweepIntervalMs) {
      await this.sweepExpired();
    }
  }

  /** Checks runtime and image, removes this instance's leftovers, and opens a new warm pool. */
  private async admit(): Promise<void> {
    const { options } = this;
    const { runtime, packages, egressRuntime } = await this.driver.check({
      egressRuntime: this.egress?.egress.runtime,
    });
    if (this.state === 'closed') return;
    this.runtime = runtime;
    this.packages = packages;
    const labels: Record<string, string> = { [INSTANCE_LABEL]: this.instanceId };
    if (options.scope !== undefined) labels[SCOPE_LABEL] = options.scope;
    this.limits = {
      ...options,
      runtime,
      labels,
      egress:
        this.egress && egressRuntime ? { gateway: this.egress, runtime: egressRuntime } : undefined,
    };
    // Everything of this instance on the engine predates the outage: its runs and sessions
    // were failed when the engine was taken out. Live interpreters belong to conversations
    // that other replicas may be serving: they stay.
    if (this.admissions > 0) await this.removeLeftovers({ keepInterpreters: true });
    if (options.sweepOnStart || this.admissions > 0) await this.sweepExpired();
    if ((this.state as SandboxEngineStatus['state']) === 'closed') return;
    this.admissions++;
    this.pool = createRunPool({
      ...{ driver: this.driver, options, limits: this.limits, cleanup: this.cleanup },
      instanceId: this.instanceId,
    });
    this.pool.fill();
    this.driver.onUp?.(true, this.cleanup);
    this.lastError = undefined;
    this.state = 'up';
    this.onStateChange(this);
  }

  private markDown(cause: unknown): void {
    if (this.state !== 'up') return;
    this.state = 'down';
    this.lastError = this.driver.toError(cause);
    this.driver.onUp?.(false, this.cleanup);
    const detail = cause instanceof Error ? cause.message : String(cause);
    const lost = new SandboxUnavailableError({
      reason: 'engine-lost',
      engine: this.name,
      message:
        `The ${this.driver.kind === 'docker' ? 'Docker engine' : 'Kubernetes cluster'} ${this.name} stopped answering while the run was in flight (${detail}); ` +
        'its outcome is unknown and it was not retried. Runs go to the other engines meanwhile.',
      cause,
    });
    this.closePool(this.lastError);
    for (const listener of [...this.lossListeners]) listener(lost);
    this.lossListeners.clear();
    this.onStateChange(this);
    this.probes.reschedule();
  }

  /** Stops the warm pool: waiters get `reason`, idle containers are removed. */
  closePool(reason: unknown): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    if (pool !== undefined) {
      const closing = pool.close(reason);
      this.closingPools.track(closing);
    }
    return this.closingPools.settled();
  }

  /** Keeps a box whose removal the engine did not answer, to remove it when it is back. */
  defer(id: string): void {
    this.deferred.add(id);
  }

  private async removeLeftovers({
    keepInterpreters = false,
    keep,
  }: { keepInterpreters?: boolean; keep?: ReadonlySet<string> } = {}): Promise<void> {
    const failed = await removeInstanceContainers({
      driver: this.driver,
      instanceId: this.instanceId,
      keepInterpreters,
      ...(keep ? { keep } : {}),
      onRemoved: id => this.cleanup.removed(id),
    });
    this.deferred.clear();
    for (const { id, cause } of failed) this.cleanup.fail(id, cause);
  }

  private async sweepExpired(): Promise<void> {
    this.lastSweep = Date.now();
    await sweepExpiredQuietly({
      ...this.options,
      driver: this.driver,
      onListError: error => void this.toError(error),
      onRemoved: id => this.cleanup.removed(id),
    });
  }

  /** The engine's state for `DockerSandbox#engineStatus`. */
  status(): SandboxEngineStatus {
    const { name, state, inFlight, sessions, runs, lastError } = this;
    return {
      ...{ name, state, inFlight, warm: this.warmCount, sessions, runs },
      ...(lastError === undefined || state !== 'down'
        ? {}
        : { lastError: lastError instanceof Error ? lastError.message : String(lastError) }),
    };
  }

  /**
   * Final clean-up, after the sandbox's runs and sessions ended: removes every container of
   * this instance on the engine (which also finds those whose create answer was lost) and
   * returns the ones that exist and could not be removed. An engine that does not answer
   * gets a quick probe; if it is still down, the containers known to exist are returned.
   * Safe to call twice (the first call's `keep` holds).
   */
  close({
    keep,
  }: {
    /** Containers to leave running (conversation interpreters another replica serves). */
    keep?: ReadonlySet<string>;
  } = {}): Promise<{ id: string; cause: unknown }[]> {
    this.closing ??= this.finish(keep);
    return this.closing;
  }

  private async finish(keep?: ReadonlySet<string>): Promise<{ id: string; cause: unknown }[]> {
    await this.probes.stop();
    this.driver.onUp?.(false, this.cleanup);
    const wasUp = this.state === 'up';
    await this.closePool(this.unavailable());
    this.state = 'closed';
    const earlier = await this.cleanup.collect();
    let cause: unknown = this.lastError;
    if (wasUp || this.deferred.size > 0 || earlier.length > 0) {
      try {
        if (!wasUp) await this.ping();
        await this.removeLeftovers(keep ? { keep } : {});
        return await this.cleanup.collect();
      } catch (error) {
        cause = error;
      }
    }
    const typed = this.driver.toError(cause ?? new Error('engine not answering'));
    const reported = new Set(earlier.map(failure => failure.id));
    for (const id of this.deferred) {
      if (this.driver.knownId(id) && !reported.has(id)) this.cleanup.fail(id, typed);
    }
    return [...earlier, ...(await this.cleanup.collect())];
  }
}
