import type Docker from 'dockerode';
import { type ContainerKind, containerLabels } from './labels.ts';

/** The user and group code runs as: `nobody`, in every container and every exec. */
export const SANDBOX_USER = '65534:65534';

/** Resource and isolation settings shared by every sandbox container. */
export type ContainerLimits = {
  /** Docker image with python3 and coreutils' `timeout`. */
  image: string;
  /** Docker runtime name, `runsc` unless the runc opt-in is set. */
  runtime: string;
  /** Memory limit in bytes (swap is disabled: same value for MemorySwap). */
  memoryBytes: number;
  /** CPU limit in cores. */
  cpus: number;
  /** Process limit of the container's pids cgroup. */
  pidsLimit: number;
  /** Size of the writable /tmp tmpfs, in MiB. */
  tmpfsMiB: number;
  /** Extra labels, e.g. the sandbox instance's id. */
  labels?: Record<string, string>;
  /**
   * The sandbox's egress policy and the runtime its containers use (set only when the app
   * configured `egress`); sessions never get it.
   */
  egress?: ContainerEgress | undefined;
};

/** What ties a container to its egress proxy: closed once the container is removed. */
export type EgressLinkLike = { close(): Promise<void> };

/**
 * What creating a container with network egress needs from the sandbox's egress gateway
 * (`EgressGateway` in egress/, which this folder does not import) and the runtime to use.
 */
export type ContainerEgress = {
  runtime: string;
  gateway: {
    open(options: {
      spec: Docker.ContainerCreateOptions;
      ttlMs: number;
      runtime?: string | undefined;
    }): Promise<{ spec: Docker.ContainerCreateOptions; link: EgressLinkLike }>;
    bind(containerId: string, link: EgressLinkLike): void;
    release(containerId: string): void;
  };
};

/**
 * The hardened `docker create` body: the hardening flags (no network, read-only root, tmpfs
 * /tmp noexec+nosuid, uid:gid 65534:65534 (`nobody`, which owns nothing on the host
 * even under the runc opt-in), all capabilities dropped, no-new-privileges, memory without
 * swap, CPU cap) and a pids limit. The pids cgroup also counts gVisor's own threads (gofer,
 * sentry, ptrace stubs: 30-40 of them), so a limit of 32 makes runsc fail to start (HTTP 500,
 * a silent exit 2, or a hung start); 128 still stops a fork bomb.
 */
export function containerSpec({
  limits,
  cmd,
  ttlMs,
  kind,
  openStdin,
  stdinOnce = openStdin,
  init = false,
}: {
  /** Resource and isolation settings. */
  limits: ContainerLimits;
  /** The command, already wrapped in `timeout -s KILL`. */
  cmd: string[];
  /** TTL recorded in the labels for the start-up sweep. */
  ttlMs: number;
  /** What the container is for, recorded in a label. */
  kind: ContainerKind;
  /** Attach stdin (code is sent on stdin). */
  openStdin: boolean;
  /**
   * Close stdin when the first attach ends (default: with `openStdin`). Interpreters keep it
   * open: every cell is a new attach, from whichever replica serves it.
   */
  stdinOnce?: boolean;
  /** Run Docker's init (tini) as PID 1 to reap orphans; long-lived session containers need it. */
  init?: boolean;
}): Docker.ContainerCreateOptions {
  return {
    Image: limits.image,
    Cmd: cmd,
    User: SANDBOX_USER,
    WorkingDir: '/tmp',
    Env: [
      'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      'HOME=/tmp',
      'LANG=C.UTF-8',
      // Under /tmp, the only writable place; a hidden directory keeps /tmp's listing clean.
      'MPLCONFIGDIR=/tmp/.config/matplotlib',
    ],
    Labels: { ...containerLabels({ ttlMs, kind }), ...limits.labels },
    NetworkDisabled: true,
    AttachStdin: openStdin,
    AttachStdout: openStdin,
    AttachStderr: openStdin,
    OpenStdin: openStdin,
    StdinOnce: stdinOnce,
    Tty: false,
    HostConfig: {
      Runtime: limits.runtime,
      NetworkMode: 'none',
      Memory: limits.memoryBytes,
      MemorySwap: limits.memoryBytes,
      NanoCpus: Math.round(limits.cpus * 1e9),
      PidsLimit: limits.pidsLimit,
      ReadonlyRootfs: true,
      Tmpfs: { '/tmp': `rw,noexec,nosuid,nodev,size=${limits.tmpfsMiB}m` },
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      LogConfig: { Type: 'none', Config: {} },
      AutoRemove: false,
      Init: init,
    },
  };
}
