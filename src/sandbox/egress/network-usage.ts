import type { SandboxNetworkUsage } from '../types.ts';

/** Refusals kept per run; beyond them only the count grows. */
export const MAX_REFUSALS_KEPT = 20;

/**
 * `result` with its network use: `network` and a note per refusal (and one for the
 * connections made); unchanged when the sandbox has no egress policy (`read` undefined).
 */
export function withNetworkUsage<T extends { notes: string[] }>(
  result: T,
  read: (() => SandboxNetworkUsage) | undefined,
): T & { network?: SandboxNetworkUsage } {
  if (read === undefined) return result;
  const network = read();
  return { ...result, network, notes: [...result.notes, ...networkNotes(network)] };
}

/** The notes a run's result carries about its network use (for people and the model). */
export function networkNotes(usage: SandboxNetworkUsage): string[] {
  const notes: string[] = [];
  if (usage.connections > 0) {
    notes.push(
      `Network: ${usage.connections} connection${usage.connections === 1 ? '' : 's'} ` +
        `(${usage.hosts.join(', ')}), ${formatBytes(usage.bytesReceived)} received, ` +
        `${formatBytes(usage.bytesSent)} sent.`,
    );
  }
  notes.push(...refusalNotes(usage));
  const more = usage.refusedCount - usage.refused.length;
  if (more > 0) notes.push(`Network: ${more} more connection${more === 1 ? '' : 's'} refused.`);
  return notes;
}

/**
 * One line per refused connection (`Network: refused host:port: why.`): in a run's notes, and
 * in the python tool's error text when the run failed, since a refusal is often why it did.
 */
export function refusalNotes(usage: Pick<SandboxNetworkUsage, 'refused'>): string[] {
  return usage.refused.map(
    refusal =>
      `Network: refused ${refusal.port === 0 ? refusal.host : `${refusal.host}:${refusal.port}`}: ${refusal.detail}.`,
  );
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
