// CPU time of host processes, from /proc (Linux): what the Docker engine and a container's
// runtime processes spend, for bench:sandbox's sizing figures.
import { readFileSync, readdirSync } from 'node:fs';

// USER_HZ: the unit of /proc/<pid>/stat's times; 100 on every Linux architecture Node runs on.
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds of a process: its own user + system time, plus (with `children`) that of the
 * children it has waited for (`runsc create`, `runsc start`... for a containerd shim).
 * Undefined when the process is gone.
 *
 * @example
 * ```ts
 * const before = processCpuSeconds({ pid: dockerdPid });
 * ```
 */
export function processCpuSeconds({
  pid,
  children = false,
}: {
  /** The process. */
  pid: number;
  /** Add the CPU time of children it has reaped. */
  children?: boolean;
}): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // Fields after the command (which may hold spaces), starting with field 3 (state).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number) as [
    number,
    number,
    number,
    number,
  ];
  return (utime + stime + (children ? cutime + cstime : 0)) / TICKS_PER_SECOND;
}

/** PIDs whose command line contains every one of `parts`. */
export function findProcesses(parts: readonly string[]): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (parts.every(part => cmdline.includes(part))) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/** The local Docker engine's long-lived processes: dockerd and its containerd. */
export function engineProcesses(pidFile = '/var/run/docker.pid'): number[] {
  const dockerd = Number(readFileSync(pidFile, 'utf8').trim());
  const children = readdirSync('/proc').filter(entry => {
    if (!/^\d+$/.test(entry)) return false;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(fields[1]) === dockerd && stat.includes('(containerd)');
    } catch {
      return false;
    }
  });
  return [dockerd, ...children.map(Number)];
}
