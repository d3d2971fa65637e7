/**
 * Why the egress proxy refused or cut a connection:
 * - `not-allowed`: the host and port are not on `egress.allow`;
 * - `private-address`: the name resolved to a non-public address its rule does not allow
 *   (loopback, private, link-local, ...);
 * - `unresolvable`: the name did not resolve;
 * - `connect-failed`: the allowed address did not answer in time or refused;
 * - `too-many-connections`: `maxConnections` at once or `maxConnectionsPerRun` reached;
 * - `byte-limit`: the run moved `maxBytesPerRun`; its connections were cut;
 * - `bad-request`: not a CONNECT or an absolute-form http:// request the proxy understands.
 *
 * @example
 * ```ts
 * const blocked = (reason: EgressRefusalReason) => reason === 'not-allowed' || reason === 'private-address';
 * ```
 */
export type EgressRefusalReason =
  | 'not-allowed'
  | 'private-address'
  | 'unresolvable'
  | 'connect-failed'
  | 'too-many-connections'
  | 'byte-limit'
  | 'bad-request';

/**
 * One connection the proxy refused or cut.
 *
 * @example
 * ```ts
 * const line = (r: EgressRefusal) => `${r.host}:${r.port} ${r.reason}`;
 * ```
 */
export type EgressRefusal = {
  /** The host the code asked for (as it asked; never a path or query). */
  host: string;
  /** The port it asked for (0 when the request could not be read). */
  port: number;
  reason: EgressRefusalReason;
  /** A sentence for people and models, e.g. "resolves to 127.0.0.1, a loopback address". */
  detail: string;
};

/**
 * What a run or cell did on the network (present only when the sandbox has an egress policy).
 *
 * @example
 * ```ts
 * if (result.network && result.network.refused.length > 0) console.warn(result.network.refused);
 * ```
 */
export type SandboxNetworkUsage = {
  /** Connections made (tunnels and forwarded requests). */
  connections: number;
  /** Bytes the code sent out, and received. */
  bytesSent: number;
  bytesReceived: number;
  /** `host:port` of every connection made, in first-use order. */
  hosts: string[];
  /** Refused or cut connections (at most 20; `refusedCount` counts them all). */
  refused: EgressRefusal[];
  refusedCount: number;
};

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
  for (const refusal of usage.refused) {
    notes.push(
      `Network: refused ${refusal.port === 0 ? refusal.host : `${refusal.host}:${refusal.port}`}: ${refusal.detail}.`,
    );
  }
  const more = usage.refusedCount - usage.refused.length;
  if (more > 0) notes.push(`Network: ${more} more connection${more === 1 ? '' : 's'} refused.`);
  return notes;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
