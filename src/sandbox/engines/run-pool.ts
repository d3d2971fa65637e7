import { createHash } from 'node:crypto';
import type { CleanupTracker } from '../driver/cleanup-tracker.ts';
import type { ContainerLimits, EngineDriver } from '../driver/engine-driver.ts';
import type { ResolvedDockerSandboxOptions } from '../options/docker-sandbox-options.ts';
import { SandboxContainer } from '../run/sandbox-container.ts';
import { SharedWarmPool } from '../run/shared-warm-pool.ts';
import { WarmPool } from '../run/warm-pool.ts';

/** What an engine needs of its warm pool of one-use boxes (`WarmPool` or `SharedWarmPool`). */
export type RunPool = {
  acquire(abortSignal?: AbortSignal): Promise<SandboxContainer>;
  readonly idleCount: number;
  readonly readyCount: number;
  fill(): void;
  close(reason: unknown): Promise<void>;
};

/**
 * The warm pool of an engine's one-use boxes: this process's own (`WarmPool`), or, on an engine
 * whose boxes any replica can claim (Kubernetes), the cluster's (`SharedWarmPool`), keyed by
 * what its boxes are started with, so only alike boxes are shared; none on an engine that keeps
 * its own (agent-sandbox), where every start is warm.
 *
 * @example
 * ```ts
 * const pool = createRunPool({ driver, options, limits, cleanup, instanceId });
 * pool.fill();
 * ```
 */
export function createRunPool({
  driver,
  options,
  limits,
  cleanup,
  instanceId,
}: {
  /** The engine. */
  driver: EngineDriver;
  /** The sandbox's options (pool size, ages, pre-imports, time limits). */
  options: ResolvedDockerSandboxOptions;
  /** Image, runtime, limits and labels of the engine's boxes. */
  limits: ContainerLimits;
  /** Removes boxes. */
  cleanup: CleanupTracker;
  /** This sandbox instance. */
  instanceId: string;
}): RunPool {
  // A warm box may idle up to warmMaxAgeMs and then run up to maxTimeoutMs.
  const ttlMs = options.warmMaxAgeMs + options.maxTimeoutMs + 60_000;
  const { warmPoolSize: size, maxConcurrentStarts, warmMaxAgeMs: maxAgeMs } = options;
  if (driver.keepsWarmPool === true) {
    // Every start takes a warm box of the engine's own pool (agent-sandbox's SandboxWarmPool).
    let closed: { reason: unknown } | undefined;
    return {
      acquire: async () => {
        if (closed !== undefined) throw closed.reason;
        return await SandboxContainer.start({
          ...{ driver, limits, ttlMs, cleanup },
          preimport: options.preimport,
        });
      },
      idleCount: 0,
      readyCount: 0,
      fill: () => {},
      close: async reason => {
        closed = { reason };
      },
    };
  }
  if (driver.claim === undefined || driver.createBox === undefined) {
    return new WarmPool({
      ...{ size, maxConcurrentStarts, maxAgeMs, cleanup },
      start: ({ preimport }) =>
        SandboxContainer.start({
          ...{ driver, limits, ttlMs, cleanup },
          preimport: preimport ? options.preimport : [],
        }),
    });
  }
  const { image, runtime, memoryBytes, cpus, pidsLimit, tmpfsMiB } = limits;
  const key = createHash('sha256')
    .update(JSON.stringify([image, runtime, memoryBytes, cpus, pidsLimit, tmpfsMiB, ttlMs]))
    .update(JSON.stringify([options.preimport, options.scope ?? '']))
    .digest('hex')
    .slice(0, 16);
  return new SharedWarmPool({
    ...{ driver, key, size, maxConcurrentStarts, maxAgeMs, instanceId, cleanup },
    preimport: options.preimport.length > 0,
    spec: ({ preimport, labels }) =>
      SandboxContainer.spec({
        limits: { ...limits, labels: { ...limits.labels, ...labels } },
        ttlMs,
        preimport: preimport ? options.preimport : [],
      }),
  });
}
