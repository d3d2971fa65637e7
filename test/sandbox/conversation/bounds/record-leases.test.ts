// The lease rules in TypeScript over a record with compare-and-set (as a Kubernetes Lease object
// gives them): the same behaviour as the Redis script's, with writers racing on the record.
import { describe, expect, it } from 'vitest';
import { recordLeases } from '../../../../src/sandbox/conversation/bounds/record-leases.ts';
import type { SharedRecord } from '../../../../src/sandbox/driver/engine-driver.ts';
import { leaseScenarios } from './lease-scenarios.ts';

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
  leaseScenarios(async () => recordLeases(memoryRecord()));

  it('holds the bound while writers race on the record: twenty reservations at once', async () => {
    const record = memoryRecord();
    const leases = recordLeases(record);
    const listing = { listedAt: await leases.now(), listed: { e1: [] } };
    const bounds = { maxAll: 2, maxEngine: 2, maxUser: 1 };
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        leases.reserve({ id: `r${i}`, engine: 'e1', user: '', listing, bounds, ttlMs: 60_000 }),
      ),
    );
    expect(answers.filter(answer => answer.ok)).toHaveLength(2);
    expect(record.conflicts).toBeGreaterThan(0);
  });

  it('never writes for a request that changes nothing, and keeps its clock across releases', async () => {
    const record = memoryRecord();
    const leases = recordLeases(record);
    const listing = { listedAt: await leases.now(), listed: { e1: [] } };
    const bounds = { maxAll: 2, maxEngine: 2, maxUser: 1 };
    await leases.reserve({ id: 'a', engine: 'e1', user: '', listing, bounds, ttlMs: 60_000 });
    await leases.release('a');
    const writes = record.writes;
    await leases.use('unknown', 0);
    await leases.now();
    expect(record.writes).toBe(writes);
    expect(JSON.parse(record.value!)).toEqual({ v: 1, seq: writes, leases: {} });
  });
});
