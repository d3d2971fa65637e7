import type { EgressRefusal, SandboxNetworkUsage } from '../types.ts';
import { MAX_REFUSALS_KEPT } from './network-usage.ts';
import { ALL_CONNECTIONS, recordable } from './refusal-target.ts';

type RunCounters = Omit<SandboxNetworkUsage, 'hosts'> & {
  hosts: Set<string>;
  /** Connections asked for (made or refused), for `maxConnectionsPerRun`. */
  attempts: number;
  overLimit: boolean;
};

/**
 * What a proxy's container did on the network in the current run or cell: connections made,
 * bytes both ways (with the run's byte limit), hosts reached and refusals, each refusal kept
 * with a host and port only (`recordable`). `take()` ends the run and starts the next.
 *
 * @example
 * ```ts
 * const usage = new ProxyUsage({ maxBytesPerRun: 1 << 20, onOverLimit: () => cutAll() });
 * usage.count('bytesReceived', 512);
 * const network = usage.take();
 * ```
 */
export class ProxyUsage {
  private readonly maxBytesPerRun: number;
  private readonly onRefused: ((refusal: EgressRefusal) => void) | undefined;
  private readonly onOverLimit: () => void;
  private run = newRun();

  constructor({
    maxBytesPerRun,
    onRefused,
    onOverLimit,
  }: {
    /** Bytes both ways per run; past it `onOverLimit` runs once and the run is over its limit. */
    maxBytesPerRun: number;
    /** Told about each refusal as it happens (telemetry). */
    onRefused?: ((refusal: EgressRefusal) => void) | undefined;
    /** Cuts the run's connections. */
    onOverLimit: () => void;
  }) {
    this.maxBytesPerRun = maxBytesPerRun;
    this.onRefused = onRefused;
    this.onOverLimit = onOverLimit;
  }

  /** Whether the run moved more than its bytes (its further connections are refused). */
  get overLimit(): boolean {
    return this.run.overLimit;
  }

  /** Connections the run asked for so far. */
  get attempts(): number {
    return this.run.attempts;
  }

  /** Counts a connection asked for. */
  attempt(): void {
    this.run.attempts += 1;
  }

  /** What went through since the last call; starts afresh. */
  take(): SandboxNetworkUsage {
    const { attempts: _attempts, overLimit: _overLimit, hosts, ...counts } = this.run;
    this.run = newRun();
    return { ...counts, hosts: [...hosts] };
  }

  /** A connection to `host:port` was made. */
  opened(host: string, port: number): void {
    this.run.connections += 1;
    this.run.hosts.add(`${host}:${port}`);
  }

  /** Counts bytes; the first time the run goes past its limit, it is cut and recorded. */
  count(direction: 'bytesSent' | 'bytesReceived', bytes: number): void {
    this.run[direction] += bytes;
    if (this.run.overLimit || this.run.bytesSent + this.run.bytesReceived <= this.maxBytesPerRun) {
      return;
    }
    this.run.overLimit = true;
    this.record({
      host: ALL_CONNECTIONS,
      port: 0,
      reason: 'byte-limit',
      detail: `the run moved more than ${this.maxBytesPerRun} bytes; its connections were cut`,
    });
    this.onOverLimit();
  }

  /** Keeps a refusal (only its host and port: never a path or query) and returns what was kept. */
  record(refusal: EgressRefusal): EgressRefusal {
    const kept = recordable(refusal);
    this.run.refusedCount += 1;
    if (this.run.refused.length < MAX_REFUSALS_KEPT) this.run.refused.push(kept);
    try {
      this.onRefused?.(kept);
    } catch {
      // Telemetry must not break the proxy.
    }
    return kept;
  }
}

function newRun(): RunCounters {
  return {
    ...{ connections: 0, bytesSent: 0, bytesReceived: 0, hosts: new Set<string>() },
    ...{ refused: [], refusedCount: 0, attempts: 0, overLimit: false },
  };
}
