import type Docker from 'dockerode';
import type { ContainerLimits } from '../driver/engine-driver.ts';
import { type ContainerKind, containerLabels } from '../driver/labels.ts';

/** The user and group code runs as: `nobody`, in every container and every exec. */
export const SANDBOX_USER = '65534:65534';

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
