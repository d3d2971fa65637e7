// The lease rules' behaviour, for any store that runs them atomically (Redis's script, or a
// record with compare-and-set): the same scenarios against each.
import { randomBytes } from 'node:crypto';
import { expect, it, vi } from 'vitest';
import type { Leases, Listing } from '../../../../src/sandbox/conversation/bounds/redis-leases.ts';

/**
 * Defines the shared scenarios; `fresh` gives empty leases (a new scope) for each.
 *
 * @example
 * leaseScenarios(async () => (await findLeases({ client, scope: `s${++scopes}` }))!);
 */
export function leaseScenarios(fresh: () => Promise<Leases>): void {
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

  it('grants exactly the bound to twenty reservations made at once', async () => {
    const leases = await fresh();
    const at = await listing(leases);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => reserve(leases, at).then(r => r.answer)),
    );
    expect(answers.filter(answer => answer.ok)).toHaveLength(2);
    expect(answers.filter(answer => !answer.ok && answer.full === 'all')).toHaveLength(18);
  });

  it('drops a started lease only when a listing taken after its start misses its container', async () => {
    const leases = await fresh();
    const before = await listing(leases);
    const first = await reserve(leases, before);
    await leases.confirm({
      ...{ id: first.lease, engine: 'e1', user: '', container: 'c1' },
      ...{ ttlMs: 60_000, busyMs: 0 },
    });
    // A listing from before the start does not show it: it still counts (with the new one).
    expect((await reserve(leases, before)).answer).toEqual({ ok: true });
    expect((await reserve(leases, before)).answer).toMatchObject({ full: 'all' });
    // Shown by a later listing: it counts. Missing from one: its container is gone.
    const shown = await listing(leases, { e1: [first.lease] });
    expect((await reserve(leases, shown)).answer).toMatchObject({ full: 'all' });
    expect((await reserve(leases, await listing(leases))).answer).toEqual({ ok: true });
    // The starting ones never: their containers may not exist yet.
    expect((await reserve(leases, await listing(leases))).answer).toMatchObject({ full: 'all' });
  });

  it('counts live interpreters that carry no lease, and offers them for eviction', async () => {
    const leases = await fresh();
    const at = await listing(leases, { e1: ['old-1', 'old-2'], e2: [] });
    const { answer } = await reserve(leases, at);
    expect(answer).toMatchObject({ full: 'all' });
    const elsewhere = await leases.reserve({
      ...{ id: id(), engine: 'e1', user: '', listing: at, ttlMs: 60_000 },
      bounds: { ...bounds, maxAll: 8 },
    });
    expect(elsewhere).toMatchObject({ full: 'engine' });
    expect(elsewhere.ok ? [] : elsewhere.spare.map(spare => spare.id).sort()).toEqual([
      'old-1',
      'old-2',
    ]);
  });

  it('gives a starting lease back when its holder stops renewing it', async () => {
    const leases = await fresh();
    const held = await reserve(leases, await listing(leases), { ttlMs: 1_000 });
    const dead = await reserve(leases, await listing(leases), { ttlMs: 1_000 });
    const renewing = setInterval(() => void leases.renew(held.lease, 1_000), 200);
    try {
      // The holder that stopped renewing frees its room; the one renewing keeps its own.
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
    const leases = await fresh();
    const wide = { maxAll: 8, maxEngine: 8, maxUser: 1 };
    const at = await listing(leases);
    /** A lease reserved and confirmed with its container, busy for `busyMs`. */
    const started = async (user: string, container: string, busyMs: number) => {
      const lease = id();
      await leases.reserve({
        id: lease,
        engine: 'e1',
        user,
        listing: at,
        bounds: wide,
        ttlMs: 60_000,
      });
      await leases.confirm({ id: lease, engine: 'e1', user, container, ttlMs: 60_000, busyMs });
      return lease;
    };
    const mine = await started('u', 'c1', 60_000);
    const again = () =>
      leases.reserve({
        id: id(),
        engine: 'e1',
        user: 'u',
        listing: at,
        bounds: wide,
        ttlMs: 60_000,
      });
    // Busy (its first cell): refused, nothing to evict.
    expect(await again()).toEqual({ full: 'user', spare: [] });
    await leases.use(mine, 0);
    expect(await again()).toMatchObject({
      full: 'user',
      spare: [{ id: mine, e: 'e1', c: 'c1', l: expect.any(Number) }],
    });
    // Another user is not bound by it; a waiting interpreter claimed for `u` is.
    const waiting = await started('', 'c2', 0);
    const claim = (user: string) =>
      leases.claim({
        ...{ id: waiting, engine: 'e1', container: 'c2', user, listing: at },
        ...{ maxUser: 1, ttlMs: 60_000, busyMs: 60_000 },
      });
    expect(await claim('u')).toMatchObject({ full: 'user' });
    expect(await claim('v')).toEqual({ ok: true });
  });
}
