// The lease rules in TypeScript over a record with compare-and-set (as a Kubernetes Lease object
// gives them): the same behaviour as the Redis script's, with writers racing on the record.
import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { recordLeases } from '../../../../src/sandbox/conversation/bounds/record-leases.ts';
import type { Leases, Listing } from '../../../../src/sandbox/conversation/bounds/redis-leases.ts';
import type { SharedRecord } from '../../../../src/sandbox/driver/engine-driver.ts';

/** A record in memory whose reads and writes take a turn of the event loop, like a server's. */
function memoryRecord(): SharedRecord & { writes: number; conflicts: number; value?: string } {
  let version = 0;
  const record = {
    writes: 0,
    conflicts: 0,
    value: undefined as string | undefined,
    async read() {
      await new Promise(resolve => setImmediate(resolve));
      return {
        value: record.value,
        version: record.value === undefined ? undefined : String(version),
      };
    },
    async write(value: string, expected: string | undefined) {
      await new Promise(resolve => setImmediate(resolve));
      const current = record.value === undefined ? undefined : String(version);
      if (current !== expected) {
        record.conflicts++;
        return false;
      }
      version++;
      record.writes++;
      record.value = value;
      return true;
    },
  };
  return record;
}

describe('interpreter leases in a record with compare-and-set', () => {
  const bounds = { maxAll: 2, maxEngine: 2, maxUser: 1 };
  const id = () => randomBytes(4).toString('hex');
  const listing = async (
    leases: Leases,
    listed: Record<string, string[]> = { e1: [] },
  ): Promise<Listing> => ({ listedAt: await leases.now(), listed });
  const reserve = async (
    leases: Leases,
    at: Listing,
    { lease = id(), user = '', ttlMs = 60_000 } = {},
  ) => ({
    lease,
    answer: await leases.reserve({ id: lease, engine: 'e1', user, listing: at, bounds, ttlMs }),
  });

  it('grants exactly the bound to twenty reservations made at once, over conflicting writes', async () => {
    const record = memoryRecord();
    const leases = recordLeases(record);
    const at = await listing(leases);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => reserve(leases, at).then(r => r.answer)),
    );
    expect(answers.filter(answer => answer.ok)).toHaveLength(2);
    expect(answers.filter(answer => !answer.ok && answer.full === 'all')).toHaveLength(18);
    expect(record.conflicts).toBeGreaterThan(0);
  });

  it('drops a started lease only when a listing taken after its start misses its container', async () => {
    const leases = recordLeases(memoryRecord());
    const before = await listing(leases);
    const first = await reserve(leases, before);
    await leases.confirm({
      ...{ id: first.lease, engine: 'e1', user: '', container: 'c1' },
      ...{ ttlMs: 60_000, busyMs: 0 },
    });
    expect((await reserve(leases, before)).answer).toEqual({ ok: true });
    expect((await reserve(leases, before)).answer).toMatchObject({ full: 'all' });
    const shown = await listing(leases, { e1: [first.lease] });
    expect((await reserve(leases, shown)).answer).toMatchObject({ full: 'all' });
    expect((await reserve(leases, await listing(leases))).answer).toEqual({ ok: true });
    expect((await reserve(leases, await listing(leases))).answer).toMatchObject({ full: 'all' });
  });

  it('counts live interpreters without a lease and offers them for eviction', async () => {
    const leases = recordLeases(memoryRecord());
    const at = await listing(leases, { e1: ['old-1', 'old-2'], e2: [] });
    expect((await reserve(leases, at)).answer).toMatchObject({ full: 'all' });
    const elsewhere = await leases.reserve({
      ...{ id: id(), engine: 'e1', user: '', listing: at, ttlMs: 60_000 },
      bounds: { ...bounds, maxAll: 8 },
    });
    expect(elsewhere.ok ? [] : elsewhere.spare.map(spare => spare.id).sort()).toEqual([
      'old-1',
      'old-2',
    ]);
  });

  it('gives a starting lease back when its holder stops renewing it', async () => {
    const leases = recordLeases(memoryRecord());
    const held = await reserve(leases, await listing(leases), { ttlMs: 1_000 });
    const dead = await reserve(leases, await listing(leases), { ttlMs: 1_000 });
    const renewing = setInterval(() => void leases.renew(held.lease, 1_000), 200);
    try {
      await vi.waitFor(
        async () => expect((await reserve(leases, await listing(leases))).answer.ok).toBe(true),
        { timeout: 10_000, interval: 100 },
      );
      expect((await reserve(leases, await listing(leases))).answer).toMatchObject({ full: 'all' });
      expect(dead.answer.ok && held.answer.ok).toBe(true);
    } finally {
      clearInterval(renewing);
    }
  });

  it('holds the user bound, claims waiting interpreters within it, and spares busy ones', async () => {
    const leases = recordLeases(memoryRecord());
    const wide = { maxAll: 8, maxEngine: 8, maxUser: 1 };
    const at = await listing(leases);
    const mine = id();
    await leases.reserve({
      id: mine,
      engine: 'e1',
      user: 'u',
      listing: at,
      bounds: wide,
      ttlMs: 60_000,
    });
    await leases.confirm({
      id: mine,
      engine: 'e1',
      user: 'u',
      container: 'c1',
      ttlMs: 60_000,
      busyMs: 60_000,
    });
    const again = () =>
      leases.reserve({
        id: id(),
        engine: 'e1',
        user: 'u',
        listing: at,
        bounds: wide,
        ttlMs: 60_000,
      });
    expect(await again()).toEqual({ full: 'user', spare: [] });
    await leases.use(mine, 0);
    expect(await again()).toMatchObject({ full: 'user', spare: [{ id: mine, e: 'e1', c: 'c1' }] });
    const waiting = id();
    await leases.reserve({
      id: waiting,
      engine: 'e1',
      user: '',
      listing: at,
      bounds: wide,
      ttlMs: 60_000,
    });
    await leases.confirm({
      id: waiting,
      engine: 'e1',
      user: '',
      container: 'c2',
      ttlMs: 60_000,
      busyMs: 0,
    });
    const claim = (user: string) =>
      leases.claim({
        ...{ id: waiting, engine: 'e1', container: 'c2', user, listing: at },
        ...{ maxUser: 1, ttlMs: 60_000, busyMs: 60_000 },
      });
    expect(await claim('u')).toMatchObject({ full: 'user' });
    expect(await claim('v')).toEqual({ ok: true });
  });

  it('never writes for a request that changes nothing, and keeps its clock across releases', async () => {
    const record = memoryRecord();
    const leases = recordLeases(record);
    const { lease } = await reserve(leases, await listing(leases));
    await leases.release(lease);
    const writes = record.writes;
    await leases.use('unknown', 0);
    await leases.now();
    expect(record.writes).toBe(writes);
    expect(JSON.parse(record.value!)).toEqual({ v: 1, seq: writes, leases: {} });
  });
});
