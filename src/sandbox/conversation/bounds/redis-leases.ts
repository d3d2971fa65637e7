import {
  type RedisScriptClient,
  redisStoreClient,
} from '../../../util/redis/redis-store-client.ts';
import type { SealedStoreStorage } from '../../../util/sealing/sealed-store.ts';
import { LEASE_SCRIPT } from './lease-script.ts';

/**
 * An idle interpreter holding room a placement needs: its placement id, engine, container
 * ('' when it carries no lease: look it up in the listing) and last use (0: not known).
 */
export type SpareInterpreter = { id: string; e: string; c: string; l: number };

/** Redis's answer to a reservation or a claim: done, or which bound is full and who idles there. */
export type LeaseAnswer =
  { ok: true } | { ok?: undefined; full: 'user' | 'all' | 'engine'; spare: SpareInterpreter[] };

/**
 * What a replica sees live: the placement ids of the interpreters on each engine it sees up,
 * listed after `listedAt` (Redis's clock, from `now()`).
 */
export type Listing = { listedAt: number; listed: Record<string, string[]> };

// Where the leases of an app (a scope) are kept, under the store's prefix of conversations.
const LEASES_KEY = 'ai-toolbelt:conversation:leases';

/** Runs one lease request atomically and answers with the reply's JSON value. */
export type LeaseRunner = (request: Record<string, unknown>) => Promise<unknown>;

/**
 * The leases of one app's interpreters (see `LEASE_SCRIPT`): in its Redis, every call one
 * atomic run of the script; or, given `run`, wherever that runs the same rules atomically (a
 * Kubernetes API server, see `recordLeases`).
 *
 * @example
 * ```ts
 * const leases = await findLeases({ store, scope: 'billing' });
 * const answer = await leases?.reserve({ id, engine: 'local', user: '', listing, ttlMs: 15_000, bounds });
 * ```
 */
export class Leases {
  private readonly runner: LeaseRunner;

  constructor(
    options:
      | {
          /** Runs the script (ioredis's `eval`). */
          client: RedisScriptClient;
          /** The Redis key of the app's leases. */
          key: string;
        }
      | {
          /** Runs a request atomically elsewhere. */
          run: LeaseRunner;
        },
  ) {
    if ('run' in options) {
      this.runner = options.run;
    } else {
      const { client, key } = options;
      this.runner = async request =>
        JSON.parse(String(await client.eval(LEASE_SCRIPT, 1, key, JSON.stringify(request))));
    }
  }

  /** Redis's time, ms: taken before a listing, so leases confirmed after it are not judged by it. */
  async now(): Promise<number> {
    return (await this.run<{ now: number }>({ op: 'now' })).now;
  }

  /** A starting lease for a new interpreter on `engine`, within the bounds. */
  async reserve(request: {
    id: string;
    engine: string;
    /** The user's tag; '' for a waiting interpreter (no user bound). */
    user: string;
    listing: Listing;
    bounds: { maxAll: number; maxEngine: number; maxUser: number };
    ttlMs: number;
  }): Promise<LeaseAnswer> {
    const { listing, bounds, ttlMs, ...rest } = request;
    return answer(
      await this.run({ op: 'reserve', ...rest, ...listing, ...bounds, ttl: ttlMs, busy: 0 }),
    );
  }

  /** A waiting interpreter's lease given to `user`, within `maxUser`. */
  async claim(request: {
    id: string;
    engine: string;
    container: string;
    user: string;
    listing: Listing;
    maxUser: number;
    ttlMs: number;
    busyMs: number;
  }): Promise<LeaseAnswer> {
    const { listing, ttlMs, busyMs, ...rest } = request;
    return answer(await this.run({ op: 'claim', ...rest, ...listing, ttl: ttlMs, busy: busyMs }));
  }

  /** The interpreter started: its lease lasts `ttlMs` now, busy for `busyMs`. */
  async confirm(request: {
    id: string;
    engine: string;
    user: string;
    container: string;
    ttlMs: number;
    busyMs: number;
  }): Promise<void> {
    const { ttlMs, busyMs, ...rest } = request;
    await this.run({ op: 'confirm', ...rest, ttl: ttlMs, busy: busyMs });
  }

  /** A starting lease lasts `ttlMs` more. */
  async renew(id: string, ttlMs: number): Promise<void> {
    await this.run({ op: 'renew', id, ttl: ttlMs });
  }

  /** The interpreter runs a cell for up to `busyMs` (0: it is idle now). */
  async use(id: string, busyMs: number): Promise<void> {
    await this.run({ op: 'use', id, busy: busyMs });
  }

  async release(id: string): Promise<void> {
    await this.run({ op: 'release', id });
  }

  private async run<T>(request: Record<string, unknown>): Promise<T> {
    return (await this.runner(request)) as T;
  }
}

/** The leases in Redis (see `findLeases`). */
export type RedisLeases = Leases;

// An empty Lua table is encoded `{}`, never `[]`.
function answer(reply: { ok?: boolean; full?: string; spare?: unknown }): LeaseAnswer {
  if (reply.ok === true) return { ok: true };
  const spare = Array.isArray(reply.spare) ? (reply.spare as SpareInterpreter[]) : [];
  return { full: reply.full as 'user' | 'all' | 'engine', spare };
}

/**
 * The leases of the app's interpreters in Redis: on `client` when given, else on the client of
 * `store` when it is unstorage's redis driver (see `redisStoreClient`: under the driver's own
 * base, beside the conversations' records), else undefined (bounds are then counted per
 * process). One key per `scope`. Throws when the store's Redis cannot be checked (asked again
 * next time).
 *
 * @example
 * ```ts
 * const leases = await findLeases({ store: createStorage({ driver: redisDriver({ url }) }) });
 * ```
 */
export async function findLeases({
  store,
  client,
  scope,
}: {
  /** The conversations' store. */
  store?: SealedStoreStorage | undefined;
  /** A Redis client given in the options (`conversations.redis`). */
  client?: RedisScriptClient | undefined;
  /** The sandbox's scope: apps sharing a Redis keep their bounds apart. */
  scope?: string | undefined;
}): Promise<RedisLeases | undefined> {
  const key = scope === undefined ? LEASES_KEY : `${LEASES_KEY}:${scope}`;
  if (client !== undefined) return new Leases({ client, key });
  if (store === undefined) return undefined;
  const found = await redisStoreClient<RedisScriptClient>({
    ...{ storage: store, key, commands: ['eval'] },
  });
  return found && new Leases({ client: found.client, key: found.redisKey(key) });
}
