// sealing/: values sealed at rest: AES-GCM with key rotation, keys derived from a secret, and
// a store that keeps only sealed values.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Storage } from 'unstorage';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import {
  deriveSealingKey,
  hashId,
  type SealingKey as Key,
  type SealingSecret,
  saltedIdKey,
} from './derive-sealing-key.ts';

/**
 * The part of an `unstorage` `Storage` a {@link SealedStore} uses. Any
 * `createStorage()` instance (memory, Redis, Vercel KV, fs, ...) fits, so one
 * Storage can hold the embedding cache, MCP sign-ins and other records.
 */
export type SealedStoreStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem' | 'getKeys'> &
  Partial<Pick<Storage, 'getMount' | 'getMounts'>>;

export type { SealingSecret } from './derive-sealing-key.ts';

/**
 * One segment of a record's key: literal text, `{ id }` for a value that must not appear in the
 * store (a user id, a URL), or `{ hashed }` for an id already hashed by `SealedStore#id` (found
 * under the key that wrote it only).
 */
export type SealedKeySegment = string | { id: string } | { hashed: string };

type Sealed = { v: 2; kid: string; iv: string; tag: string; data: string };
type Plain = { v: 2; plain: unknown; exp?: number };
type Envelope = { value: unknown; exp?: number };

/**
 * JSON records in an unstorage `Storage` under one prefix, sealed with
 * AES-256-GCM. Each secret yields, through HKDF and bound to `purpose`, one
 * key for sealing, another for hashing ids and a key id stored with every
 * value, so records of different purposes never share keys and a key list
 * rotates: the first key writes, every key reads, and a record found under
 * an old key is rewritten under the first one when next written. The storage
 * key is the cipher's associated data, so a value copied under another key
 * (another user's) does not open there. Expiry is kept inside the record and
 * checked on read, so it holds on drivers that ignore `ttl` (memory, fs).
 * Without secrets records are plain JSON and ids are hashed with a random
 * salt kept in the store.
 *
 * @example
 * ```ts
 * const sealed = new SealedStore({ store: createStorage(), prefix: 'app:mcp', purpose: 'mcp-auth', keys: [process.env.TOKEN_KEY!] });
 * await sealed.set(['user', { id: 'alice' }], { tokens }, { ttlMs: 60_000 });
 * ```
 */
export class SealedStore {
  private readonly store: SealedStoreStorage;
  private readonly prefix: string;
  private readonly keys: readonly Key[];

  constructor({
    store,
    prefix,
    purpose,
    keys = [],
    keyOption = 'keys',
  }: {
    /** Where records go. */
    store: SealedStoreStorage;
    /** Key prefix, e.g. `ai-toolbelt:mcp-auth` (`/` becomes `:`, as unstorage stores keys). */
    prefix: string;
    /** What the records are, e.g. `mcp-auth`: feeds key derivation, so other purposes never share keys. */
    purpose: string;
    /** Secrets, newest first: the first seals, all open. None: plain JSON. */
    keys?: readonly SealingSecret[];
    /** The option the secrets came from, for errors (e.g. `encryptionKey`). */
    keyOption?: string;
  }) {
    assertStorage(store);
    if (typeof purpose !== 'string' || purpose === '') {
      throw new InvalidArgumentError({
        argument: 'purpose',
        value: purpose,
        message: 'expected a non-empty string naming what the records are (e.g. "mcp-auth").',
      });
    }
    this.store = store;
    this.prefix = normalizePrefix(prefix);
    if (this.prefix === '') {
      throw new InvalidArgumentError({
        argument: 'prefix',
        value: prefix,
        message: 'expected a non-empty key prefix (e.g. "ai-toolbelt:mcp-auth").',
      });
    }
    const derived = keys.map((secret, i) =>
      deriveSealingKey({ secret, purpose, option: keyOption, index: i }),
    );
    // The same secret twice would only cost reads.
    this.keys =
      derived.length > 0
        ? derived.filter((key, i) => derived.findIndex(k => k.kid === key.kid) === i)
        : [saltedIdKey({ store, saltKey: `${this.prefix}:id-salt`, purpose })];
  }

  /** True when records are encrypted at rest. */
  get encrypted(): boolean {
    return this.keys[0]!.seal !== undefined;
  }

  /** The id of the key that seals new records (derived from the secret; reveals nothing about it). */
  get keyId(): string | undefined {
    return this.encrypted ? this.keys[0]!.kid : undefined;
  }

  /** A store-safe, non-reversible id for a value, under the key that writes. */
  async id(value: string): Promise<string> {
    return hashId(await this.keys[0]!.hash, value);
  }

  /** The value's id under every key (to recognise an id written before a rotation). */
  async ids(value: string): Promise<string[]> {
    return await Promise.all(this.keys.map(async key => hashId(await key.hash, value)));
  }

  /** The full storage key of some segments under the key that writes. */
  async key(segments: readonly SealedKeySegment[]): Promise<string> {
    return await this.storageKey(segments, this.keys[0]!);
  }

  async get<T>(segments: readonly SealedKeySegment[]): Promise<T | undefined> {
    for (const storageKey of await this.storageKeys(segments)) {
      const raw = await this.store.getItem<unknown>(storageKey);
      if (raw == null) continue;
      const envelope = this.open(storageKey, raw);
      if (envelope === undefined) continue;
      if (envelope.exp !== undefined && envelope.exp <= Date.now()) {
        await this.store.removeItem(storageKey);
        continue;
      }
      return envelope.value as T;
    }
    return undefined;
  }

  async set(
    segments: readonly SealedKeySegment[],
    value: unknown,
    {
      ttlMs,
    }: {
      /** Forget the record after this long (also passed to drivers that expire keys). */
      ttlMs?: number;
    } = {},
  ): Promise<void> {
    const [storageKey, ...older] = await this.storageKeys(segments);
    const exp = ttlMs === undefined ? undefined : Date.now() + ttlMs;
    // Drivers that expire keys (Redis, KV) take `ttl` in seconds; the rest rely on `exp`.
    const options = ttlMs === undefined ? undefined : { ttl: Math.ceil(ttlMs / 1000) };
    await this.store.setItem(storageKey!, this.seal(storageKey!, value, exp) as never, options);
    // Copies under older keys would outlive a later remove() of the rewritten record.
    await Promise.all(older.map(key => this.store.removeItem(key)));
  }

  async remove(segments: readonly SealedKeySegment[]): Promise<void> {
    const keys = await this.storageKeys(segments);
    await Promise.all(keys.map(key => this.store.removeItem(key)));
  }

  /** Removes every record under some segments (e.g. all of one user's servers), under every key. */
  async removeAll(segments: readonly SealedKeySegment[]): Promise<void> {
    for (const base of await this.storageKeys(segments)) {
      const keys = await this.store.getKeys(base);
      await Promise.all(
        keys.filter(key => key.startsWith(`${base}:`)).map(key => this.store.removeItem(key)),
      );
    }
  }

  /** Deletes the expired records under some segments (for drivers that ignore `ttl`); returns how many. */
  async removeExpired(segments: readonly SealedKeySegment[]): Promise<number> {
    let removed = 0;
    for (const base of await this.storageKeys(segments)) {
      for (const key of await this.store.getKeys(base)) {
        if (!key.startsWith(`${base}:`)) continue;
        const raw = await this.store.getItem<unknown>(key);
        const envelope = raw == null ? undefined : this.open(key, raw);
        if (envelope?.exp !== undefined && envelope.exp <= Date.now()) {
          await this.store.removeItem(key);
          removed++;
        }
      }
    }
    return removed;
  }

  private async storageKey(segments: readonly SealedKeySegment[], key: Key): Promise<string> {
    const parts = await Promise.all(
      segments.map(async segment =>
        typeof segment === 'string'
          ? segment
          : 'hashed' in segment
            ? segment.hashed
            : hashId(await key.hash, segment.id),
      ),
    );
    return [this.prefix, ...parts].join(':');
  }

  // The segments' storage key under each key, the writing key's first, without repeats.
  private async storageKeys(segments: readonly SealedKeySegment[]): Promise<string[]> {
    const keys = await Promise.all(this.keys.map(key => this.storageKey(segments, key)));
    return [...new Set(keys)];
  }

  private seal(storageKey: string, value: unknown, exp: number | undefined): Sealed | Plain {
    const key = this.keys[0]!;
    if (key.seal === undefined)
      return { v: 2, plain: value, ...(exp === undefined ? {} : { exp }) };
    const envelope: Envelope = { value, ...(exp === undefined ? {} : { exp }) };
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key.seal, iv);
    cipher.setAAD(Buffer.from(storageKey));
    const data = Buffer.concat([cipher.update(JSON.stringify(envelope), 'utf8'), cipher.final()]);
    return {
      v: 2,
      kid: key.kid,
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      data: data.toString('base64'),
    };
  }

  private open(storageKey: string, raw: unknown): Envelope | undefined {
    if (!this.encrypted) {
      // Sealed values, or ones written before this format, are not plain records.
      if (!isPlain(raw)) return undefined;
      return { value: raw.plain, ...(raw.exp === undefined ? {} : { exp: raw.exp }) };
    }
    if (!isSealed(raw)) return undefined; // plain, or an older format: not readable as sealed
    const key = this.keys.find(candidate => candidate.kid === raw.kid);
    if (key?.seal === undefined) return undefined; // sealed with a key that is not configured
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.seal, Buffer.from(raw.iv, 'base64'));
      decipher.setAAD(Buffer.from(storageKey));
      decipher.setAuthTag(Buffer.from(raw.tag, 'base64'));
      const plain = Buffer.concat([
        decipher.update(Buffer.from(raw.data, 'base64')),
        decipher.final(),
      ]);
      return JSON.parse(plain.toString('utf8')) as Envelope;
    } catch {
      // A moved value or tampering: treat as absent, never as someone else's.
      return undefined;
    }
  }
}

/** Throws {@link InvalidArgumentError} naming `store` unless it is an unstorage Storage. */
export function assertStorage(store: unknown): asserts store is SealedStoreStorage {
  for (const method of ['getItem', 'setItem', 'removeItem', 'getKeys'] as const) {
    if (typeof (store as Partial<SealedStoreStorage> | null)?.[method] !== 'function') {
      throw new InvalidArgumentError({
        argument: 'store',
        value: store,
        message: `expected an unstorage Storage (createStorage() from "unstorage"); it lacks ${method}().`,
      });
    }
  }
}

// unstorage stores `a/b` as `a:b` (and `\` as `:`, `::` as `:`, no leading or trailing `:`, nothing
// after `?`) and lists it so: keys must be built that way too, or getKeys() finds nothing under
// them (and the key, sealed in as associated data, would not match the listed one).
function normalizePrefix(prefix: string): string {
  if (typeof prefix !== 'string') return '';
  return (prefix.split('?')[0] ?? '')
    .replace(/[/\\]/g, ':')
    .replace(/:+/g, ':')
    .replace(/^:|:$/g, '');
}

function isSealed(value: unknown): value is Sealed {
  const sealed = value as Partial<Sealed> | null;
  return (
    sealed?.v === 2 &&
    typeof sealed.kid === 'string' &&
    typeof sealed.iv === 'string' &&
    typeof sealed.tag === 'string' &&
    typeof sealed.data === 'string'
  );
}

function isPlain(value: unknown): value is Plain {
  const plain = value as Partial<Plain> | null;
  return (
    plain?.v === 2 && 'plain' in plain && (plain.exp === undefined || typeof plain.exp === 'number')
  );
}
