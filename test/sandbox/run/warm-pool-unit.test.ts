import { describe, expect, it } from 'vitest';
import type { CleanupTracker } from '../../../src/sandbox/driver/cleanup-tracker.ts';
import type { SandboxContainer } from '../../../src/sandbox/run/sandbox-container.ts';
import { WarmPool } from '../../../src/sandbox/run/warm-pool.ts';

type Fake = {
  id: number;
  alive: boolean;
  ready: boolean;
  preimported: boolean;
  startedAt: number;
  discarded: boolean;
};

/** A pool over fake containers whose starts the test resolves or fails by hand. */
function harness({ size = 2, maxConcurrentStarts = 2, maxAgeMs = 60_000 } = {}) {
  const pending: Array<{
    resolve: (c: Fake) => void;
    reject: (e: unknown) => void;
    preimport: boolean;
  }> = [];
  let nextId = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const made: Fake[] = [];
  const pool = new WarmPool({
    size,
    maxConcurrentStarts,
    maxAgeMs,
    cleanup: {} as CleanupTracker,
    start: ({ preimport }) =>
      new Promise<SandboxContainer>((resolve, reject) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        pending.push({
          resolve: fake => {
            inFlight--;
            resolve(fake as unknown as SandboxContainer);
          },
          reject: error => {
            inFlight--;
            reject(error);
          },
          preimport,
        });
      }),
  });
  const fake = (startedAt = Date.now()): Fake => {
    const container: Fake & { discard: () => void } = {
      id: nextId++,
      alive: true,
      ready: true,
      preimported: false,
      startedAt,
      discarded: false,
      discard: () => void (container.discarded = true),
    };
    made.push(container);
    return container;
  };
  const settle = () => new Promise(resolve => setImmediate(resolve));
  return { pool, pending, fake, made, settle, maxInFlight: () => maxInFlight };
}

describe('WarmPool (fake containers)', () => {
  it('fills up to its size with bounded concurrent starts, then hands out FIFO and refills', async () => {
    const h = harness({ size: 3, maxConcurrentStarts: 2 });
    h.pool.fill();
    expect(h.pending).toHaveLength(2);
    h.pending.shift()!.resolve(h.fake());
    await h.settle();
    expect(h.pending).toHaveLength(2); // the third start began when a slot freed
    h.pending.shift()!.resolve(h.fake());
    h.pending.shift()!.resolve(h.fake());
    await h.settle();
    expect(h.pool.idleCount).toBe(3);
    expect(h.maxInFlight()).toBe(2);
    const first = (await h.pool.acquire()) as unknown as Fake;
    expect(first.id).toBe(0);
    expect(h.pending).toHaveLength(1); // refill
  });

  it('queues callers when empty and gives each the next started container', async () => {
    const h = harness({ size: 0, maxConcurrentStarts: 1 });
    const a = h.pool.acquire();
    const b = h.pool.acquire();
    expect(h.pending).toHaveLength(1);
    h.pending.shift()!.resolve(h.fake());
    expect(((await a) as unknown as Fake).id).toBe(0);
    await h.settle();
    h.pending.shift()!.resolve(h.fake());
    expect(((await b) as unknown as Fake).id).toBe(1);
  });

  it('replaces idle containers that are too old or dead', async () => {
    const h = harness({ size: 2, maxAgeMs: 1_000 });
    h.pool.fill();
    const old = h.fake(Date.now() - 5_000);
    const dead = h.fake();
    dead.alive = false;
    h.pending.shift()!.resolve(old);
    h.pending.shift()!.resolve(dead);
    await h.settle();
    const next = h.pool.acquire();
    expect(old.discarded).toBe(true);
    expect(dead.discarded).toBe(true);
    expect(h.pending.length).toBeGreaterThanOrEqual(2);
    const fresh = h.fake();
    h.pending.shift()!.resolve(fresh);
    expect(await next).toBe(fresh);
  });

  it('passes a start failure to a waiting caller, and backs off when nobody waits', async () => {
    const h = harness({ size: 1, maxConcurrentStarts: 1 });
    const waiting = h.pool.acquire();
    h.pending.shift()!.reject(new Error('runsc start hung'));
    await expect(waiting).rejects.toThrow('runsc start hung');
    await h.settle();
    // The refill for the pool itself fails with nobody waiting: no immediate retry.
    h.pending.shift()!.reject(new Error('again'));
    await h.settle();
    expect(h.pending).toHaveLength(0);
    // A caller still gets a start at once, despite the back-off.
    const next = h.pool.acquire();
    expect(h.pending).toHaveLength(1);
    h.pending.shift()!.resolve(h.fake());
    await expect(next).resolves.toBeDefined();
  });

  it('close() discards idle containers, fails waiters, and discards late starts', async () => {
    const h = harness({ size: 1, maxConcurrentStarts: 2 });
    h.pool.fill();
    const idle = h.fake();
    h.pending.shift()!.resolve(idle);
    await h.settle();
    await h.pool.acquire(); // takes idle; a refill starts
    const waiting = h.pool.acquire();
    const closing = h.pool.close(new Error('closed'));
    await expect(waiting).rejects.toThrow('closed');
    const late = h.fake();
    for (const start of h.pending.splice(0)) start.resolve(late);
    await closing;
    expect(late.discarded).toBe(true);
    await expect(h.pool.acquire()).rejects.toThrow('closed');
  });

  it('pre-imports in background starts only, and hands out a ready container before an importing one', async () => {
    const h = harness({ size: 2, maxConcurrentStarts: 3 });
    const waiting = h.pool.acquire();
    expect(h.pending.map(start => start.preimport)).toEqual([false, true, true]);
    const [coldStart, ...warmStarts] = h.pending.splice(0);
    // A pre-importing container that starts first stays in the pool: the cold one is coming.
    const importing = Object.assign(h.fake(), { ready: false, preimported: true });
    warmStarts[0]!.resolve(importing);
    await h.settle();
    expect(h.pool.idleCount).toBe(1);
    const cold = h.fake();
    coldStart!.resolve(cold);
    expect(await waiting).toBe(cold);
    const ready = Object.assign(h.fake(), { preimported: true });
    warmStarts[1]!.resolve(ready);
    await h.settle();
    expect(await h.pool.acquire()).toBe(ready);
    expect(await h.pool.acquire()).toBe(importing);
  });
});
