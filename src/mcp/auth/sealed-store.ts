import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import type { Storage } from 'unstorage';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';

/**
 * The part of an `unstorage` `Storage` the OAuth provider uses. Any
 * `createStorage()` instance (memory, Redis, Vercel KV, fs, ...) fits, so one
 * Storage can hold both the embedding cache and MCP sign-ins.
 */
export type McpAuthStore = Pick<Storage, 'getItem' | 'setItem' | 'removeItem' | 'getKeys'>;

type Sealed = { v: 1; iv: string; tag: string; data: string };

/**
 * JSON values in an unstorage `Storage` under one prefix, optionally sealed
 * with AES-256-GCM. The storage key is the cipher's associated data, so a
 * value copied under another key (another user's) fails to open instead of
 * being read as theirs. Key segments for users and servers are hashed (keyed
 * with the secret when there is one): ids never appear in the store.
 *
 * @example
 * ```ts
 * const sealed = new SealedStore({ store: createStorage(), prefix: 'app:mcp', secret: process.env.MCP_TOKEN_KEY });
 * await sealed.set(['u', sealed.id('alice')], { tokens });
 * ```
 */
export class SealedStore {
  private readonly store: McpAuthStore;
  private readonly prefix: string;
  private readonly sealingKey: Buffer | undefined;

  constructor({
    store,
    prefix,
    secret,
  }: {
    /** Where values go. */
    store: McpAuthStore;
    /** Key prefix, e.g. `ai-toolbelt:mcp-auth`. */
    prefix: string;
    /** Encrypts values when given: at least 32 characters (or bytes) of secret. */
    secret?: string | Uint8Array | undefined;
  }) {
    for (const method of ['getItem', 'setItem', 'removeItem', 'getKeys'] as const) {
      if (typeof (store as Partial<McpAuthStore> | null)?.[method] !== 'function') {
        throw new InvalidArgumentError({
          argument: 'store',
          value: store,
          message: `expected an unstorage Storage (createStorage() from "unstorage"); it lacks ${method}().`,
        });
      }
    }
    this.store = store;
    this.prefix = prefix.replace(/:+$/, '');
    if (secret !== undefined) {
      const bytes = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : Buffer.from(secret);
      if (bytes.length < 32) {
        throw new InvalidArgumentError({
          argument: 'encryptionKey',
          value: '(redacted)',
          message: `needs at least 32 bytes of secret, got ${bytes.length}; e.g. \`openssl rand -base64 32\`.`,
        });
      }
      this.sealingKey = Buffer.from(
        hkdfSync('sha256', bytes, 'ai-toolbelt', 'mcp-auth store v1', 32),
      );
    }
  }

  /** True when values are encrypted at rest. */
  get encrypted(): boolean {
    return this.sealingKey !== undefined;
  }

  /** A store-safe, non-reversible id for a user id or server URL. */
  id(value: string): string {
    const digest =
      this.sealingKey === undefined
        ? createHash('sha256').update(value)
        : createHmac('sha256', this.sealingKey).update(value);
    return digest.digest('base64url').slice(0, 32);
  }

  /** The full storage key of some segments (segments must be store-safe: use `id()`). */
  key(segments: readonly string[]): string {
    return [this.prefix, ...segments].join(':');
  }

  async get<T>(segments: readonly string[]): Promise<T | undefined> {
    const key = this.key(segments);
    const raw = await this.store.getItem<unknown>(key);
    if (raw == null) return undefined;
    if (this.sealingKey === undefined) return raw as T;
    if (!isSealed(raw)) return undefined; // written before encryption was turned on: ignore
    try {
      const decipher = createDecipheriv(
        'aes-256-gcm',
        this.sealingKey,
        Buffer.from(raw.iv, 'base64'),
      );
      decipher.setAAD(Buffer.from(key));
      decipher.setAuthTag(Buffer.from(raw.tag, 'base64'));
      const plain = Buffer.concat([
        decipher.update(Buffer.from(raw.data, 'base64')),
        decipher.final(),
      ]);
      return JSON.parse(plain.toString('utf8')) as T;
    } catch {
      // Another key, a moved value or tampering: treat as absent, never as someone else's.
      return undefined;
    }
  }

  async set(
    segments: readonly string[],
    value: unknown,
    { ttlMs }: { ttlMs?: number } = {},
  ): Promise<void> {
    const key = this.key(segments);
    // Drivers that expire keys (Redis, KV) take `ttl` in seconds; others ignore it.
    const options = ttlMs === undefined ? undefined : { ttl: Math.ceil(ttlMs / 1000) };
    if (this.sealingKey === undefined) {
      await this.store.setItem(key, value as never, options);
      return;
    }
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.sealingKey, iv);
    cipher.setAAD(Buffer.from(key));
    const data = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    const sealed: Sealed = {
      v: 1,
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      data: data.toString('base64'),
    };
    await this.store.setItem(key, sealed as never, options);
  }

  async remove(segments: readonly string[]): Promise<void> {
    await this.store.removeItem(this.key(segments));
  }

  /** Removes every key under some segments (e.g. all of one user's servers). */
  async removeAll(segments: readonly string[]): Promise<void> {
    const base = this.key(segments);
    const keys = await this.store.getKeys(base);
    await Promise.all(
      keys.filter(key => key.startsWith(`${base}:`)).map(key => this.store.removeItem(key)),
    );
  }
}

function isSealed(value: unknown): value is Sealed {
  const sealed = value as Partial<Sealed> | null;
  return (
    sealed?.v === 1 &&
    typeof sealed.iv === 'string' &&
    typeof sealed.tag === 'string' &&
    typeof sealed.data === 'string'
  );
}
