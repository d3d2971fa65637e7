import { randomBytes } from 'node:crypto';
import type { CleanupTracker } from '../driver/cleanup-tracker.ts';
import type { BoxInfo, BoxSpec, EngineDriver } from '../driver/engine-driver.ts';
import {
  EXPIRES_LABEL,
  INSTANCE_LABEL,
  PLACEMENT_LABEL,
  POOL_LABEL,
  READY_LABEL,
} from '../driver/labels.ts';
import { READY_MARKER } from '../in-container/bootstrap.ts';
import { backoffDelayMs } from '../../util/backoff-delay.ts';
import { PendingWork } from '../../util/pending-work.ts';
import { SandboxContainer } from './sandbox-container.ts';

// How long a new pool box's log is watched for the ready marker, and how often.
const READY_WATCH_MS = 120_000;
const READY_POLL_MS = 500;

/**
 * The warm pool of one-use boxes on an engine every replica reaches (Kubernetes): the waiting
 * boxes are the cluster's, not a process's. Any replica tops the pool up to `size` (counting
 * every replica's waiting boxes, and its own starts not yet listed), and a replica takes one by
 * one conditional update of its labels (`claim`: the pool label goes, the instance label becomes
 * the taker's), so two replicas never take the same box. A box whose pre-imports are done is
 * marked ready (its log shows the marker) and taken first; boxes older than `maxAgeMs` are
 * claimed and removed by whoever lists them. With none to take, the caller gets a box started
 * for it, without pre-imports. `close()` claims and removes this replica's waiting boxes.
 *
 * @example
 * ```ts
 * const pool = new SharedWarmPool({ driver, key, size: 2, maxConcurrentStarts: 2, maxAgeMs: 300_000, instanceId, cleanup, spec, preimport });
 * const box = await pool.acquire(abortSignal);
 * ```
 */
export class SharedWarmPool {
  private readonly driver: EngineDriver;
  private readonly key: string;
  private readonly size: number;
  private readonly maxConcurrentStarts: number;
  private readonly maxAgeMs: number;
  private readonly instanceId: string;
  private readonly cleanup: CleanupTracker;
  private readonly spec: (options: {
    preimport: boolean;
    labels: Record<string, string>;
  }) => BoxSpec;
  private readonly preimported: boolean;
  /** Placement ids of this replica's starts not yet done. */
  private readonly starting = new Set<string>();
  private readonly work = new PendingWork();
  private readonly timer: NodeJS.Timeout;
  private filling: Promise<void> | undefined;
  private again = false;
  private failures = 0;
  private retryAt = 0;
  private closed = false;
  private closedReason: unknown;
  private listed: BoxInfo[] = [];

  constructor({
    driver,
    key,
    size,
    maxConcurrentStarts,
    maxAgeMs,
    instanceId,
    cleanup,
    spec,
    preimport,
  }: {
    /** The engine (with `createBox` and `claim`). */
    driver: EngineDriver;
    /** The pool's key: boxes started alike (image, limits, pre-imports, scope) share one. */
    key: string;
    /** Waiting boxes to keep, over every replica. */
    size: number;
    /** Starts of this replica at once. */
    maxConcurrentStarts: number;
    /** Waiting boxes older than this are replaced. */
    maxAgeMs: number;
    /** This sandbox instance: the taker's label. */
    instanceId: string;
    /** Removes boxes. */
    cleanup: CleanupTracker;
    /** The box to start, with pre-imports or not, with extra labels. */
    spec: (options: { preimport: boolean; labels: Record<string, string> }) => BoxSpec;
    /** Whether pool boxes pre-import. */
    preimport: boolean;
  }) {
    this.driver = driver;
    this.key = key;
    this.size = size;
    this.maxConcurrentStarts = maxConcurrentStarts;
    this.maxAgeMs = maxAgeMs;
    this.instanceId = instanceId;
    this.cleanup = cleanup;
    this.spec = spec;
    this.preimported = preimport;
    this.timer = setInterval(() => this.fill(), Math.max(1_000, Math.min(maxAgeMs / 4, 30_000)));
    this.timer.unref();
  }

  /** Waiting boxes at the last look, over every replica. */
  get idleCount(): number {
    return this.listed.filter(box => box.state === 'running').length;
  }

  /** Waiting boxes whose pre-imports are done, at the last look. */
  get readyCount(): number {
    return this.listed.filter(box => box.labels[READY_LABEL] === '1').length;
  }

  /** Tops the pool up (in the background; one pass at a time). */
  fill(): void {
    if (this.closed) return;
    if (this.filling !== undefined) {
      this.again = true;
      return;
    }
    this.filling = this.work.track(
      this.fillOnce()
        .catch(() => {})
        .finally(() => {
          this.filling = undefined;
          if (this.again) {
            this.again = false;
            this.fill();
          }
        }),
    );
  }

  private async fillOnce(): Promise<void> {
    const now = Date.now();
    const listed = await this.list();
    const stale = listed.filter(box => now - box.createdMs > this.maxAgeMs);
    for (const box of stale) void this.removeIfClaimed(box);
    const kept = listed.filter(box => !stale.includes(box));
    // Replicas filling at the same moment can overshoot: every replica removes the same newest
    // surplus (claimed first, so each goes once).
    const surplus = sortNewestFirst(kept).slice(0, Math.max(0, kept.length - this.size));
    for (const box of surplus) void this.removeIfClaimed(box);
    const placements = new Set(listed.map(box => box.labels[PLACEMENT_LABEL]));
    const unlisted = [...this.starting].filter(id => !placements.has(id)).length;
    let deficit = this.size - kept.length - unlisted;
    if (now < this.retryAt) return;
    while (deficit-- > 0 && this.starting.size < this.maxConcurrentStarts && !this.closed) {
      this.startOne();
    }
  }

  private async list(): Promise<BoxInfo[]> {
    this.listed = await this.driver.list({ kind: 'execute', pool: this.key, live: true });
    return this.listed;
  }

  private startOne(): void {
    const placement = randomBytes(8).toString('hex');
    this.starting.add(placement);
    const labels = { [POOL_LABEL]: this.key, [PLACEMENT_LABEL]: placement };
    const started = this.driver.createBox!(this.spec({ preimport: true, labels }), {
      cleanup: this.cleanup,
    }).then(
      id => {
        this.failures = 0;
        this.starting.delete(placement);
        this.work.track(this.markReady(id));
        this.fill();
      },
      () => {
        // Back off instead of spinning; callers meanwhile get boxes started for them.
        this.starting.delete(placement);
        this.failures++;
        this.retryAt =
          Date.now() + backoffDelayMs({ attempt: this.failures, initialDelayMs: 1_000 });
      },
    );
    this.work.track(started);
  }

  /** Labels a new box ready once its log shows the marker (if nobody took it meanwhile). */
  private async markReady(id: string): Promise<void> {
    const deadline = Date.now() + READY_WATCH_MS;
    while (!this.closed && Date.now() < deadline) {
      const log = await this.driver.earlyOutput(id).catch(() => undefined);
      if (log === undefined) return;
      if (log.includes(READY_MARKER)) {
        const box = (await this.list().catch(() => [])).find(found => found.id === id);
        const marked =
          box !== undefined &&
          (await this.driver.claim!(box, { [READY_LABEL]: '1' }).catch(() => false));
        // The counts (`readyCount`) read the last listing: list again now rather than at the
        // next fill, up to 30 s away.
        if (marked) await this.list().catch(() => {});
        return;
      }
      await new Promise(resolve => setTimeout(resolve, READY_POLL_MS));
    }
  }

  /** Claims a waiting box (so nobody else takes it) and removes it. */
  private async removeIfClaimed(box: BoxInfo): Promise<void> {
    const won = await this.driver.claim!(box, { [POOL_LABEL]: null }).catch(() => false);
    if (won) await this.cleanup.remove(box.id);
  }

  /** A box for one run: a waiting one taken by claim, else one started for the caller. */
  async acquire(abortSignal?: AbortSignal): Promise<SandboxContainer> {
    if (this.closed) throw this.closedReason;
    abortSignal?.throwIfAborted();
    const now = Date.now();
    const candidates = (await this.list())
      .filter(box => box.state === 'running' && now - box.createdMs <= this.maxAgeMs)
      .sort(
        (a, b) =>
          Number(b.labels[READY_LABEL] === '1') - Number(a.labels[READY_LABEL] === '1') ||
          a.createdMs - b.createdMs,
      );
    for (const box of candidates) {
      const won = await this.driver.claim!(box, {
        ...{ [POOL_LABEL]: null, [READY_LABEL]: null },
        [INSTANCE_LABEL]: this.instanceId,
      }).catch(() => false);
      if (!won) continue;
      this.fill();
      try {
        return await SandboxContainer.attach({
          ...{ driver: this.driver, id: box.id, startedAt: box.createdMs },
          expiresAt: Number(box.labels[EXPIRES_LABEL]) || now,
          preimported: this.preimported,
          ready: box.labels[READY_LABEL] === '1',
        });
      } catch {
        void this.cleanup.remove(box.id);
      }
    }
    this.fill();
    const { limits, ttlMs } = this.spec({ preimport: false, labels: {} });
    return await SandboxContainer.start({
      ...{ driver: this.driver, limits, ttlMs, cleanup: this.cleanup },
    });
  }

  /** Stops filling, and claims and removes this replica's waiting boxes. */
  async close(reason: unknown): Promise<void> {
    this.closed = true;
    this.closedReason = reason;
    clearInterval(this.timer);
    await this.work.settled();
    const mine = await this.driver
      .list({ kind: 'execute', pool: this.key, instanceId: this.instanceId })
      .catch(() => []);
    await Promise.all(mine.map(box => this.removeIfClaimed(box)));
  }
}

/** Boxes newest first, ties by id: every replica picks the same ones. */
export function sortNewestFirst(boxes: readonly BoxInfo[]): BoxInfo[] {
  return [...boxes].sort((a, b) => b.createdMs - a.createdMs || (a.id < b.id ? -1 : 1));
}
