// options/: DockerSandbox's options and defaults: limits, the engines of a fleet, conversations,
// the image.
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import type { SandboxCleanupError } from '../../errors/sandbox-cleanup-error.ts';
import type { ConversationOptions } from './conversation-options.ts';
import {
  type EgressOptions,
  type ResolvedEgress,
  resolveEgressOptions,
} from '../egress/egress-options.ts';
import { DEFAULT_PREIMPORT, DEFAULT_SANDBOX_IMAGE } from './default-image.ts';
import {
  resolveFleetOptions,
  type FleetOptions,
  type ResolvedFleetOptions,
} from './fleet-options.ts';
import { checkMinimums } from '../../util/check-minimums.ts';

/**
 * Options of `DockerSandbox`. Every one has a safe default.
 *
 * @example
 * ```ts
 * const options: DockerSandboxOptions = { warmPoolSize: 4, maxOutputBytes: 256 * 1024 };
 * ```
 */
export type DockerSandboxOptions = FleetOptions & {
  /** Image with python3 and coreutils' `timeout`; made by scripts/setup-sandbox.sh. */
  image?: string;
  /**
   * Modules warm containers import while they wait for code (default: numpy, pandas,
   * matplotlib.pyplot; about 70 MiB per idle container); `[]` turns pre-importing off.
   */
  preimport?: readonly string[];
  /** Figures returned per run as PNG; more are left out with a note. */
  maxImages?: number;
  /** Files returned per run from /tmp/outputs; more are left out with a note. */
  maxOutputFiles?: number;
  /**
   * Values a conversation cell may show (its last expression and `display()` calls), each as a
   * MIME bundle; more are left out with a note. Their bytes count in `maxArtifactBytes`.
   */
  maxResults?: number;
  /** Bytes of all images and files returned by one run. */
  maxArtifactBytes?: number;
  /** Input files accepted per run (`execute`'s `files`). */
  maxInputFiles?: number;
  /** Bytes of all input files of one run; they must also fit in /tmp (`tmpfsMiB`). */
  maxInputBytes?: number;
  /** Docker runtime; gVisor's `runsc` unless you opt in below. */
  runtime?: string;
  /** Allow running WITHOUT gVisor (plain runc) when runsc is missing. Development only. */
  unsafeAllowRuncRuntime?: boolean;
  /** Memory limit per container, bytes (no swap). */
  memoryBytes?: number;
  /** CPU limit per container, cores. */
  cpus?: number;
  /** pids limit per container (at least 96): gVisor's own threads count too, and with 64 runs fail under `egress` (its forwarder is one more process). */
  pidsLimit?: number;
  /** Size of the writable /tmp, MiB. */
  tmpfsMiB?: number;
  /** Wall-clock limit when `execute` gets none. */
  defaultTimeoutMs?: number;
  /** Largest `timeoutMs` accepted (it also bounds every container's TTL). */
  maxTimeoutMs?: number;
  /** Largest code accepted, UTF-8 bytes. */
  maxCodeBytes?: number;
  /** Output cap per stream, bytes; over it the run is killed (`output-limit`). */
  maxOutputBytes?: number;
  /** Deadline of each Docker API call (create, start, kill, remove...). */
  dockerTimeoutMs?: number;
  /** Containers kept started and waiting for code, per engine; 0 makes every run cold. */
  warmPoolSize?: number;
  /** Idle warm containers older than this are replaced. */
  warmMaxAgeMs?: number;
  /** Container starts in flight at once (each start costs ~250 ms of CPU under gVisor). */
  maxConcurrentStarts?: number;
  /** Runs at once per engine (a run's slot is held until its container is gone); further calls queue. */
  maxConcurrentExecutions?: number;
  /** Runs that may wait for a slot at once (over all engines); past it `execute` rejects with `SandboxBusyError`. */
  maxQueued?: number;
  /** Sessions open at once; past it `createSession` rejects with `SandboxBusyError`. */
  maxSessions?: number;
  /** Remove expired sandbox containers (of any replica) when an engine is first checked. */
  sweepOnStart?: boolean;
  /** Told about each container that could not be removed (default: a process warning). */
  onCleanupError?: (error: SandboxCleanupError) => void;
  /**
   * Conversation interpreters (`executeCell`, `pythonTool({ conversation })`): where their
   * handles and history live (`store`, `encryptionKey`), idle expiry, bounds and limits.
   */
  conversations?: ConversationOptions;
  /**
   * What code may reach over the network (default: nothing, not even DNS): hosts and ports, a
   * package index for `pip install`, bounds. Enforced by a proxy on the host per container;
   * needs engines on this host reached over a Unix socket and the `runsc-egress` runtime
   * (setup-sandbox registers it). See docs/sandbox.md, "Network egress".
   */
  egress?: EgressOptions;
};

/** `DockerSandboxOptions` with every default filled in. */
export type ResolvedDockerSandboxOptions = Required<
  Omit<DockerSandboxOptions, 'onCleanupError' | 'conversations' | 'egress' | keyof FleetOptions>
> &
  Pick<DockerSandboxOptions, 'onCleanupError'> &
  ResolvedFleetOptions & { egress: ResolvedEgress | undefined };

/** Fills in defaults and checks ranges (`InvalidArgumentError`). */
export function resolveDockerSandboxOptions({
  image = DEFAULT_SANDBOX_IMAGE,
  preimport = DEFAULT_PREIMPORT,
  maxImages = 10,
  maxOutputFiles = 20,
  maxResults = 20,
  maxArtifactBytes = 8 * 1024 * 1024,
  maxInputFiles = 100,
  maxInputBytes = 16 * 1024 * 1024,
  runtime = 'runsc',
  unsafeAllowRuncRuntime = false,
  memoryBytes = 256 * 1024 * 1024,
  cpus = 1,
  pidsLimit = 128,
  tmpfsMiB = 32,
  defaultTimeoutMs = 10_000,
  maxTimeoutMs = 300_000,
  maxCodeBytes = 1_000_000,
  maxOutputBytes = 1024 * 1024,
  dockerTimeoutMs = 15_000,
  warmPoolSize = 2,
  warmMaxAgeMs = 300_000,
  maxConcurrentStarts = 2,
  maxConcurrentExecutions = 4,
  maxQueued = 64,
  maxSessions = 16,
  sweepOnStart = true,
  onCleanupError,
  conversations: _conversations,
  egress,
  ...fleet
}: DockerSandboxOptions = {}): ResolvedDockerSandboxOptions {
  checkMinimums([
    ['memoryBytes', memoryBytes, 16 * 1024 * 1024],
    ['cpus', cpus, 0.01],
    ['pidsLimit', pidsLimit, 96],
    ['tmpfsMiB', tmpfsMiB, 1],
    ['defaultTimeoutMs', defaultTimeoutMs, 1],
    ['maxTimeoutMs', maxTimeoutMs, 1],
    ['maxCodeBytes', maxCodeBytes, 1],
    ['maxOutputBytes', maxOutputBytes, 1],
    ['dockerTimeoutMs', dockerTimeoutMs, 1],
    ['warmPoolSize', warmPoolSize, 0],
    ['warmMaxAgeMs', warmMaxAgeMs, 1_000],
    ['maxConcurrentStarts', maxConcurrentStarts, 1],
    ['maxConcurrentExecutions', maxConcurrentExecutions, 1],
    ['maxQueued', maxQueued, 0],
    ['maxSessions', maxSessions, 0],
    ['maxImages', maxImages, 0],
    ['maxOutputFiles', maxOutputFiles, 0],
    ['maxResults', maxResults, 0],
    ['maxArtifactBytes', maxArtifactBytes, 0],
    ['maxInputFiles', maxInputFiles, 0],
    ['maxInputBytes', maxInputBytes, 0],
  ]);
  if (
    !Array.isArray(preimport) ||
    !preimport.every(
      name => typeof name === 'string' && /^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$/.test(name),
    )
  ) {
    throw new InvalidArgumentError({
      argument: 'preimport',
      value: preimport,
      message: 'must be an array of Python module names such as "pandas" or "matplotlib.pyplot"',
    });
  }
  return {
    ...{ preimport, maxImages, maxOutputFiles, maxArtifactBytes, maxInputFiles, maxInputBytes },
    maxResults,
    ...resolveFleetOptions(fleet),
    ...{ image, runtime, unsafeAllowRuncRuntime, memoryBytes, cpus, pidsLimit, tmpfsMiB },
    ...{ defaultTimeoutMs, maxTimeoutMs, maxCodeBytes, maxOutputBytes, dockerTimeoutMs },
    ...{ warmPoolSize, warmMaxAgeMs, maxConcurrentStarts, maxConcurrentExecutions, sweepOnStart },
    ...{ maxQueued, maxSessions },
    onCleanupError,
    egress: egress === undefined ? undefined : resolveEgressOptions(egress),
  };
}
