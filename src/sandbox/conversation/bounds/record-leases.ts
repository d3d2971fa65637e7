import type { SharedRecord } from '../../driver/engine-driver.ts';
import { applyLeaseRequest, parseLeaseState } from './lease-rules.ts';
import { Leases } from './redis-leases.ts';

// Writers racing on the record retry this often before a placement fails.
const MAX_WRITES = 30;

/**
 * The app's leases in a record of the engine's API server (a Kubernetes Lease object, see
 * `SharedRecord`): each request reads the record, applies `LEASE_SCRIPT`'s rules to it
 * (`applyLeaseRequest`) and writes it back only if nobody wrote in between (compare-and-set on
 * its version), else reads again. So replicas hold `maxInterpreters`, `maxPerEngine` and
 * `maxPerUser` together, as with Redis, with no store of their own.
 *
 * @example
 * ```ts
 * const leases = recordLeases(driver.sharedRecord!('ai-toolbelt-interpreters'));
 * ```
 */
export function recordLeases(record: SharedRecord): Leases {
  return new Leases({
    run: async request => {
      for (let attempt = 1; ; attempt++) {
        const { value, version } = await record.read();
        const op = request as Record<string, unknown> & { op: string };
        const { state, reply, changed } = applyLeaseRequest(parseLeaseState(value), op, Date.now());
        if (!changed || (await record.write(JSON.stringify(state), version))) return reply;
        if (attempt >= MAX_WRITES) {
          throw new Error(`the interpreters' leases changed under ${MAX_WRITES} writes in a row`);
        }
        // Someone wrote first: read again after a moment, staggered so racers spread out.
        await new Promise(resolve => setTimeout(resolve, Math.random() * 20 * attempt));
      }
    },
  });
}
