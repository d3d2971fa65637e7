import type { SpareInterpreter } from './redis-leases.ts';

/** One interpreter's lease, as `LEASE_SCRIPT` keeps it (see there for the fields). */
type Lease = { e: string; u: string; c: string; at: number; x: number; l: number; b: number };

/** The whole state, one JSON value: the leases and a count of writes (the record's clock). */
export type LeaseState = { v: 1; seq: number; leases: Record<string, Lease> };

/** A request, as `Leases` sends it to the script. */
export type LeaseRequest = Record<string, unknown> & { op: string };

/** Reads a stored state, tolerating anything malformed (it is dropped, as the script does). */
export function parseLeaseState(text: string | undefined): LeaseState {
  let parsed: unknown;
  try {
    parsed = text === undefined ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const value = (parsed ?? {}) as { seq?: unknown; leases?: unknown };
  const leases: Record<string, Lease> = {};
  if (typeof value.leases === 'object' && value.leases !== null) {
    for (const [id, raw] of Object.entries(value.leases as Record<string, Partial<Lease>>)) {
      if (typeof raw?.x !== 'number') continue;
      leases[id] = {
        ...{ e: String(raw.e ?? ''), u: String(raw.u ?? ''), c: String(raw.c ?? '') },
        ...{ at: Number(raw.at) || 0, x: raw.x, l: Number(raw.l) || 0, b: Number(raw.b) || 0 },
      };
    }
  }
  return { v: 1, seq: typeof value.seq === 'number' ? value.seq : 0, leases };
}

/**
 * `LEASE_SCRIPT`'s rules in TypeScript, for a store that has compare-and-set instead of scripts
 * (a Kubernetes API server): the caller reads the state, applies one request here, and writes
 * the result only if nobody wrote in between. The one difference is the clock of confirmations:
 * replicas' clocks are not one clock, so `at` (when a lease was confirmed) and `listedAt` count
 * writes (`seq`) instead of milliseconds, and `now` answers the next write's number. Expiries
 * and busy marks keep wall-clock milliseconds (a start lease is 15 s; clocks within a second or
 * two of each other only shift that).
 *
 * @example
 * ```ts
 * const { state, reply, changed } = applyLeaseRequest(parseLeaseState(text), { op: 'release', id }, Date.now());
 * ```
 */
export function applyLeaseRequest(
  stored: LeaseState,
  request: LeaseRequest,
  now: number,
): { state: LeaseState; reply: Record<string, unknown>; changed: boolean } {
  const state: LeaseState = { v: 1, seq: stored.seq, leases: { ...stored.leases } };
  const leases = state.leases;
  const req = request as LeaseRequest & {
    id: string;
    engine: string;
    user: string;
    container: string;
    ttl: number;
    busy: number;
    listedAt: number;
    listed: Record<string, string[]>;
    maxAll: number;
    maxEngine: number;
    maxUser: number;
  };
  if (req.op === 'now') return { state, reply: { now: state.seq + 1 }, changed: false };
  for (const [id, lease] of Object.entries(leases)) if (lease.x <= now) delete leases[id];
  const seq = state.seq + 1;
  const write = (reply: Record<string, unknown>) => {
    state.seq = seq;
    return { state, reply, changed: true };
  };
  const busyUntil = (ms: number) => (ms > 0 ? now + ms : 0);
  const { op, id } = req;
  if (op === 'release') {
    delete leases[id];
    return write({ ok: true });
  }
  if (op === 'renew' || op === 'use') {
    const found = leases[id];
    if (found === undefined) return { state, reply: { ok: false }, changed: false };
    const lease = { ...found };
    if (op === 'renew' && lease.c === '') lease.x = now + req.ttl;
    if (op === 'use') Object.assign(lease, { l: now, b: busyUntil(req.busy) });
    leases[id] = lease;
    return write({ ok: true });
  }
  if (op === 'confirm') {
    // Past its expiry (a start slower than its renewals) it comes back: the container exists.
    const base = leases[id] ?? { e: req.engine, u: req.user, c: '', at: 0, x: 0, l: 0, b: 0 };
    leases[id] = {
      ...base,
      c: req.container,
      at: seq,
      l: now,
      x: now + req.ttl,
      b: busyUntil(req.busy),
    };
    return write({ ok: true });
  }
  const listed = new Map<string, string>();
  for (const [engine, ids] of Object.entries(req.listed))
    for (const p of ids) listed.set(p, engine);
  for (const [lid, lease] of Object.entries(leases)) {
    const judged = req.listed[lease.e] !== undefined;
    if (lease.c !== '' && lease.at < req.listedAt && judged && !listed.has(lid)) delete leases[lid];
  }
  let all = 0;
  let here = 0;
  let mine = 0;
  const spareHere: SpareInterpreter[] = [];
  const spareMine: SpareInterpreter[] = [];
  for (const [lid, lease] of Object.entries(leases)) {
    const engine = listed.get(lid) ?? lease.e;
    const idle = lease.c !== '' && lease.b <= now;
    if (req.listed[engine] === undefined) continue;
    all++;
    const spare = { id: lid, e: engine, c: lease.c, l: lease.l };
    if (engine === req.engine) {
      here++;
      if (idle) spareHere.push(spare);
    }
    if (req.user !== '' && lease.u === req.user && lid !== id) {
      mine++;
      if (idle) spareMine.push(spare);
    }
  }
  for (const [placement, engine] of listed) {
    if (leases[placement] !== undefined) continue;
    all++;
    if (engine === req.engine) {
      here++;
      spareHere.push({ id: placement, e: engine, c: '', l: 0 });
    }
  }
  // Refusals write too: they dropped what had expired.
  if (req.user !== '' && mine >= req.maxUser) return write({ full: 'user', spare: spareMine });
  if (op === 'claim') {
    const base = leases[id] ?? { e: req.engine, c: req.container, at: seq, x: now + req.ttl };
    leases[id] = {
      ...{ l: 0, b: 0 },
      ...base,
      u: req.user,
      l: now,
      b: busyUntil(req.busy),
    } as Lease;
    return write({ ok: true });
  }
  if (all >= req.maxAll) return write({ full: 'all' });
  if (here >= req.maxEngine) return write({ full: 'engine', spare: spareHere });
  leases[id] = { e: req.engine, u: req.user, c: '', at: 0, l: now, b: 0, x: now + req.ttl };
  return write({ ok: true });
}
