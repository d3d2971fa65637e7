// driver/: what an engine is: the EngineDriver interface that the Docker and Kubernetes engines
// implement, a box's attach stream, its labels, and background removals.
import type { SandboxNetworkUsage } from '../types.ts';
import type { BoxStream } from './box-stream.ts';
import type { CleanupTracker } from './cleanup-tracker.ts';
import type { ContainerKind } from './labels.ts';

/** What ties a box to its egress proxy: closed once the box is removed. */
export type EgressLinkLike = { close(): Promise<void> };

/**
 * What creating a Docker container with network egress needs from the sandbox's egress gateway
 * (`EgressGateway` in egress/, which this folder does not import) and the runtime to use.
 */
export type ContainerEgress = {
  runtime: string;
  gateway: {
    // The spec is the engine's (a Docker create body); a method, so the gateway's narrower one fits.
    open(options: {
      spec: object;
      ttlMs: number;
      runtime?: string | undefined;
    }): Promise<{ spec: object; link: EgressLinkLike }>;
    bind(containerId: string, link: EgressLinkLike): void;
    release(containerId: string): void;
  };
};

/** Resource and isolation settings shared by every sandbox box (container or pod). */
export type ContainerLimits = {
  /** Image with python3 and coreutils' `timeout`. */
  image: string;
  /** The gVisor runtime: a Docker runtime name (`runsc`), or a Kubernetes RuntimeClass. */
  runtime: string;
  /** Memory limit in bytes (no swap). */
  memoryBytes: number;
  /** CPU limit in cores. */
  cpus: number;
  /** Process limit of the box's pids cgroup (Docker; on Kubernetes the node's podPidsLimit). */
  pidsLimit: number;
  /** Size of the writable /tmp (a memory file system), in MiB. */
  tmpfsMiB: number;
  /** Extra labels, e.g. the sandbox instance's id. */
  labels?: Record<string, string>;
  /**
   * The sandbox's egress policy and the runtime its containers use (set only when the app
   * configured `egress`, Docker engines only); sessions never get it.
   */
  egress?: ContainerEgress | undefined;
};

/** A box to start: one run, a session or a conversation's interpreter. */
export type BoxSpec = {
  /** Image, runtime and resource limits. */
  limits: ContainerLimits;
  /** The command, already wrapped in `timeout -s KILL`. */
  cmd: string[];
  /** Its life bound (recorded in the expiry label; Kubernetes also ends the pod then). */
  ttlMs: number;
  /** What the box is for (a label). */
  kind: ContainerKind;
  /** stdin is closed when the first attach closes it (one-shot runs); else it stays open. */
  stdinOnce: boolean;
  /** Run an init as PID 1 that reaps orphans (long-lived boxes). */
  init: boolean;
};

/** A box's state, as the engine reports it. */
export type BoxState = {
  /** Running. */
  running: boolean;
  /** Made but not yet running (a pod being scheduled, a container created and not started). */
  starting: boolean;
  /** Its exit code once it exited, else null. */
  exitCode: number | null;
  /** It was killed at its memory limit. */
  oomKilled: boolean;
  /** Its labels. */
  labels: Record<string, string>;
};

/** A box as a listing shows it. */
export type BoxInfo = {
  /** The id `remove`, `attach` and `state` take. */
  id: string;
  labels: Record<string, string>;
  /** `starting` (created, not yet running), `running`, `stopping` (being removed) or `exited`. */
  state: 'starting' | 'running' | 'stopping' | 'exited';
  /** When it was created, epoch ms. */
  createdMs: number;
  /** Its version (a Kubernetes resourceVersion), for a conditional `claim`. */
  version?: string;
  /** The engine's own object as listed (what `claim` updates). */
  source?: unknown;
};

/**
 * One small record every replica reads and writes with compare-and-set (on Kubernetes, a Lease
 * object's annotation): what the bounds on interpreters are kept in when the engine's API server
 * is the shared place.
 */
export type SharedRecord = {
  /** The value and its version (both undefined when the record does not exist yet). */
  read(): Promise<{ value: string | undefined; version: string | undefined }>;
  /**
   * Writes `value` if the record is still at `version` (undefined: creates it); false when
   * another writer came first (read again and retry).
   */
  write(value: string, version: string | undefined): Promise<boolean>;
};

/** Which boxes a listing returns: always the sandbox's own label, and these. */
export type BoxFilter = {
  /** Only those of one sandbox instance. */
  instanceId?: string | undefined;
  /** Only those of sandboxes with this `scope`. */
  scope?: string | undefined;
  /** Only those of one kind. */
  kind?: ContainerKind | undefined;
  /** Only those starting or running. */
  live?: boolean;
  /** Only those waiting in the shared warm pool `pool` (`POOL_LABEL`). */
  pool?: string | undefined;
};

/** What an engine's check found: the runtime to use and what the image says about itself. */
export type EngineCheck = {
  runtime: string;
  /** The image's Python distributions (its `ai-toolbelt.packages` label), when known. */
  packages?: string[];
  /** The runtime of containers with egress, when asked for and present. */
  egressRuntime?: string;
};

/**
 * One engine the sandbox runs boxes on, in the terms the fleet, the pools, conversations and
 * output caps use: health (`ping`, `check`), start and attach (`startBox`, `attach`, whose
 * streams carry the same bytes on every engine), `state`, `waitExit`, `kill`, `remove` and
 * `list` by label. Every call has the engine's deadline; failures come back through
 * `toError` as the sandbox's typed errors naming the engine.
 *
 * @example
 * ```ts
 * const { id, stream } = await driver.startBox(spec, { cleanup });
 * stream.onOutput((which, bytes) => collect(which, bytes));
 * stream.end(input);
 * await driver.remove(id);
 * ```
 */
export interface EngineDriver {
  /** The engine's name in errors and status (never with credentials). */
  readonly name: string;
  /** `docker` (a Docker engine with gVisor) or `kubernetes` (a cluster with a gVisor RuntimeClass). */
  readonly kind: 'docker' | 'kubernetes';
  /**
   * Whether `startBox`'s stream carries the box's output from its first byte (Docker attaches
   * before it starts); false when it attaches to a box already running (Kubernetes): what the
   * box wrote before is in `earlyOutput`.
   */
  readonly streamsFromStart: boolean;
  /** Answers, or throws. */
  ping(): Promise<void>;
  /** Checks the runtime and the image (typed errors naming the fix). */
  check(options: { egressRuntime?: string | undefined }): Promise<EngineCheck>;
  /**
   * Creates and starts a box with its stdin, stdout and stderr attached. On failure a box that
   * was made is handed to `cleanup`.
   */
  startBox(
    spec: BoxSpec,
    options: {
      /** Removes what a failed start made (and, with egress, closes the box's proxy with it). */
      cleanup: Pick<CleanupTracker, 'remove' | 'whenRemoved'>;
      /** Aborting stops the start. */
      abortSignal?: AbortSignal | undefined;
    },
  ): Promise<{ id: string; stream: BoxStream }>;
  /** A new attach to a running box: its output from now on, and its stdin. */
  attach(id: string): Promise<BoxStream>;
  /**
   * What a box wrote before the first attach (empty when its stream saw everything), stdout
   * and stderr together.
   */
  earlyOutput(id: string): Promise<Buffer>;
  /**
   * The box's state, or undefined when it is gone. With `settle`, an exit by SIGKILL is looked at
   * again for a moment until the engine has recorded an OOM kill behind it.
   */
  state(id: string, options?: { settle?: boolean }): Promise<BoxState | undefined>;
  /** Resolves with the exit code once the box has exited. */
  waitExit(id: string, abortSignal: AbortSignal): Promise<number>;
  /** Ends the box's processes now; a box already stopped or gone counts as done. */
  kill(id: string): Promise<void>;
  /** Removes the box (killing it if it runs) and resolves once it is gone. */
  remove(id: string): Promise<void>;
  /** The sandbox's boxes (by label). */
  list(filter: BoxFilter): Promise<BoxInfo[]>;
  /** Maps a failure of a call to this engine into the sandbox's typed errors. */
  toError(error: unknown, options?: { inFlight?: boolean }): unknown;
  /** True when the engine did not answer (it may be down); false for an answer or other errors. */
  isTransportError(error: unknown): boolean;
  /** True for the engine's "already gone" answers, which a removal may ignore. */
  isGone(error: unknown): boolean;
  /**
   * Creates and starts a box without attaching to it, resolving once it runs (a waiting box of a
   * shared pool, attached by whoever claims it). Engines whose boxes any replica can claim have it.
   */
  createBox?(
    spec: BoxSpec,
    options: {
      cleanup: Pick<CleanupTracker, 'remove' | 'whenRemoved'>;
      abortSignal?: AbortSignal | undefined;
    },
  ): Promise<string>;
  /**
   * Sets or (null) removes labels of a listed box if it is still at the version listed: one
   * conditional update, so of replicas claiming the same box one wins (true), the others lose
   * (false). Engines whose boxes any replica can reach have it (Kubernetes).
   */
  claim?(box: BoxInfo, labels: Record<string, string | null>): Promise<boolean>;
  /**
   * The engine keeps warm boxes itself (Kubernetes with agent-sandbox: its SandboxWarmPools), so
   * a start is already warm: the sandbox keeps no waiting boxes of its own on it.
   */
  readonly keepsWarmPool?: boolean;
  /** The shared record `name` in the engine's API server (Kubernetes), for exact bounds. */
  sharedRecord?(name: string): SharedRecord;
  /** Whether `id` surely names a box (a Docker create whose answer was lost knows only a name). */
  knownId(id: string): boolean;
  /**
   * With egress (Docker engines on this host): takes over the proxy of an interpreter another
   * process started when nothing serves it; returns the reader of its network use.
   */
  adoptEgress?(
    id: string,
    cleanup: CleanupTracker,
  ): Promise<(() => SandboxNetworkUsage) | undefined>;
  /**
   * The engine went up (true) or down (false): background watches start or stop (with egress, a
   * Docker engine follows its containers' removals and tells `removals`).
   */
  onUp?(up: boolean, removals: { removed(id: string): void; held(): string[] }): void;
}
