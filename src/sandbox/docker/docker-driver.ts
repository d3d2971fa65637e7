import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import type { SandboxNetworkUsage } from '../types.ts';
import type { BoxStream } from '../driver/box-stream.ts';
import type { CleanupTracker } from '../driver/cleanup-tracker.ts';
import type {
  BoxFilter,
  BoxInfo,
  BoxSpec,
  BoxState,
  EngineCheck,
  EngineDriver,
} from '../driver/engine-driver.ts';
import { checkEngine } from './check-engine.ts';
import { containerSpec } from './container-spec.ts';
import { createContainer } from './create-container.ts';
import { dockerCall, isGone } from './docker-call.ts';
import { dockerBoxStream } from './docker-stream.ts';
import { isTransportError, toEngineError } from './engine-errors.ts';
import { exitedState } from './exited-state.ts';
import { RemovalWatch } from './removal-watch.ts';
import { removeContainer } from './remove-container.ts';
import { listSandboxContainers } from './sweep.ts';

const KNOWN_ID = /^[0-9a-f]{64}$/;

/** The part of the sandbox's egress gateway a driver uses (`EgressGateway`, by shape). */
type EgressAdoption = {
  adopt(options: {
    container: Docker.Container;
    dockerTimeoutMs: number;
    cleanup: CleanupTracker;
  }): Promise<(() => SandboxNetworkUsage) | undefined>;
};
const STATES: Record<string, BoxInfo['state']> = {
  created: 'starting',
  running: 'running',
  restarting: 'running',
  paused: 'running',
  removing: 'stopping',
};

/**
 * A Docker engine with gVisor as an `EngineDriver`: containers made with the hardened create
 * body, attached before they start (so no output is lost), every call with a deadline
 * (`dockerTimeoutMs`; a runsc start can hang), errors typed with the engine's name. With an
 * egress policy it also follows the engine's `destroy` events while up, so a container's proxy
 * closes however the container goes.
 *
 * @example
 * ```ts
 * const driver = new DockerDriver({ name: 'local', docker: new Docker(), image, runtime: 'runsc', unsafeAllowRuncRuntime: false, dockerTimeoutMs: 15_000 });
 * await driver.check({});
 * ```
 */
export class DockerDriver implements EngineDriver {
  readonly kind = 'docker';
  readonly streamsFromStart = true;
  readonly name: string;
  readonly docker: Docker;
  private readonly options: {
    image: string;
    runtime: string;
    unsafeAllowRuncRuntime: boolean;
    dockerTimeoutMs: number;
  };
  private readonly egress: EgressAdoption | undefined;
  private removals: RemovalWatch | undefined;

  constructor({
    name,
    docker,
    image,
    runtime,
    unsafeAllowRuncRuntime,
    dockerTimeoutMs,
    egress,
  }: {
    /** The engine's name in errors. */
    name: string;
    /** Its client. */
    docker: Docker;
    /** The image that must be there. */
    image: string;
    /** The runtime asked for (`runsc`). */
    runtime: string;
    /** Allow a runtime that is not gVisor (development only). */
    unsafeAllowRuncRuntime: boolean;
    /** Deadline of each Docker call. */
    dockerTimeoutMs: number;
    /** The sandbox's egress gateway, with a policy: removals are followed while up (see `onUp`). */
    egress?: EgressAdoption | undefined;
  }) {
    this.name = name;
    this.docker = docker;
    this.options = { image, runtime, unsafeAllowRuncRuntime, dockerTimeoutMs };
    this.egress = egress;
  }

  private get timeoutMs(): number {
    return this.options.dockerTimeoutMs;
  }

  async ping(): Promise<void> {
    await dockerCall({
      operation: 'ping',
      timeoutMs: Math.min(this.timeoutMs, 5_000),
      // dockerode honours abortSignal here; its types do not declare it.
      call: abortSignal =>
        (this.docker.ping as (options: object) => Promise<unknown>).call(this.docker, {
          abortSignal,
        }),
    });
  }

  check({ egressRuntime }: { egressRuntime?: string | undefined }): Promise<EngineCheck> {
    return checkEngine({
      ...this.options,
      docker: this.docker,
      engine: this.name,
      egressRuntime,
    });
  }

  async startBox(
    spec: BoxSpec,
    { cleanup }: Parameters<EngineDriver['startBox']>[1],
  ): Promise<{ id: string; stream: BoxStream }> {
    const { limits, cmd, ttlMs, kind, stdinOnce, init } = spec;
    const body = containerSpec({ limits, cmd, ttlMs, kind, openStdin: true, stdinOnce, init });
    const container = await createContainer({
      ...{ docker: this.docker, spec: body, dockerTimeoutMs: this.timeoutMs, cleanup, ttlMs },
      egress: limits.egress,
    });
    let stream: BoxStream | undefined;
    try {
      // Attach before start, so no output is lost. runsc can hang at start (see pidsLimit).
      stream = await this.attachTo(container);
      await dockerCall({
        operation: 'container start',
        timeoutMs: this.timeoutMs,
        call: abortSignal => container.start({ abortSignal }),
      });
      return { id: container.id, stream };
    } catch (error) {
      stream?.destroy();
      void cleanup.remove(container.id);
      throw error;
    }
  }

  attach(id: string): Promise<BoxStream> {
    return this.attachTo(this.docker.getContainer(id));
  }

  private async attachTo(container: Docker.Container): Promise<BoxStream> {
    const socket = (await dockerCall({
      operation: 'container attach',
      timeoutMs: this.timeoutMs,
      call: abortSignal =>
        container.attach({
          ...{ stream: true, stdin: true, stdout: true, stderr: true, hijack: true },
          abortSignal,
        }),
    })) as Duplex;
    return dockerBoxStream(socket);
  }

  async earlyOutput(): Promise<Buffer> {
    // The stream of `startBox` was attached before the start: it saw everything.
    return Buffer.alloc(0);
  }

  async state(id: string, { settle = false } = {}): Promise<BoxState | undefined> {
    const container = this.docker.getContainer(id);
    try {
      if (settle) {
        // Settling reads the state only (labels are not asked for then).
        const state = await exitedState({ container, dockerTimeoutMs: this.timeoutMs });
        return toBoxState(state, {});
      }
      const info = await dockerCall({
        operation: 'container inspect',
        timeoutMs: this.timeoutMs,
        call: abortSignal => container.inspect({ abortSignal }),
      });
      return toBoxState(info.State, info.Config.Labels ?? {});
    } catch (error) {
      if (isGone(error)) return undefined;
      throw error;
    }
  }

  async waitExit(id: string, abortSignal: AbortSignal): Promise<number> {
    const { StatusCode } = (await this.docker.getContainer(id).wait({ abortSignal })) as {
      StatusCode: number;
    };
    return StatusCode;
  }

  async kill(id: string): Promise<void> {
    try {
      await dockerCall({
        operation: 'container kill',
        timeoutMs: this.timeoutMs,
        call: abortSignal => this.docker.getContainer(id).kill({ signal: 'SIGKILL', abortSignal }),
      });
    } catch (error) {
      if (!isGone(error)) throw error;
    }
  }

  remove(id: string): Promise<void> {
    return removeContainer({
      container: this.docker.getContainer(id),
      dockerTimeoutMs: this.timeoutMs,
    });
  }

  async list({ instanceId, scope, kind, live = false }: BoxFilter): Promise<BoxInfo[]> {
    const listed = await listSandboxContainers({
      docker: this.docker,
      dockerTimeoutMs: this.timeoutMs,
      ...(instanceId === undefined ? {} : { instanceId }),
      ...(scope === undefined ? {} : { scope }),
      ...(kind === undefined ? {} : { kind }),
      ...(live ? { states: ['created', 'running'] } : {}),
    });
    return listed.map(info => ({
      id: info.Id,
      labels: info.Labels ?? {},
      state: STATES[info.State] ?? 'exited',
      createdMs: info.Created * 1000,
    }));
  }

  toError(error: unknown, { inFlight = false }: { inFlight?: boolean } = {}): unknown {
    return toEngineError(error, { engine: this.name, inFlight });
  }

  isTransportError(error: unknown): boolean {
    return isTransportError(error);
  }

  isGone(error: unknown): boolean {
    return isGone(error);
  }

  knownId(id: string): boolean {
    return KNOWN_ID.test(id);
  }

  async adoptEgress(
    id: string,
    cleanup: CleanupTracker,
  ): Promise<(() => SandboxNetworkUsage) | undefined> {
    return await this.egress?.adopt({
      container: this.docker.getContainer(id),
      dockerTimeoutMs: this.timeoutMs,
      cleanup,
    });
  }

  onUp(up: boolean, removals: { removed(id: string): void; held(): string[] }): void {
    if (this.egress === undefined) return;
    if (!up) {
      this.removals?.stop();
      return;
    }
    this.removals ??= new RemovalWatch({
      docker: this.docker,
      cleanup: removals,
      dockerTimeoutMs: this.timeoutMs,
    });
    void this.removals.start();
  }
}

function toBoxState(
  state: Docker.ContainerInspectInfo['State'],
  labels: Record<string, string>,
): BoxState {
  return {
    running: state.Running,
    starting: !state.Running && state.Status === 'created',
    exitCode: state.Running ? null : state.ExitCode,
    oomKilled: state.OOMKilled,
    labels,
  };
}
