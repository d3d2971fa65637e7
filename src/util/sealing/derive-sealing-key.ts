import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import type { Storage } from 'unstorage';

/** A secret that seals records: at least 32 bytes (a string counts its UTF-8 bytes). */
export type SealingSecret = string | Uint8Array;

/** What a {@link SealedStore} seals and hashes with: no `seal` without a secret. */
export type SealingKey = { kid: string; seal: Buffer | undefined; hash: Promise<Buffer> };

const MIN_SECRET_BYTES = 32;
const SALT = 'ai-toolbelt sealed-store';

/**
 * The keys one secret yields for one purpose, through HKDF-SHA256 (salt
 * `ai-toolbelt sealed-store`): `seal\0<purpose>` for AES-256-GCM,
 * `id\0<purpose>` for HMAC id hashes, and `key-id` for the id stored with
 * each sealed value (the same for every purpose; it reveals nothing of the
 * secret). Throws {@link InvalidArgumentError} for a secret under 32 bytes.
 *
 * @example
 * ```ts
 * const key = deriveSealingKey({ secret: process.env.TOKEN_KEY!, purpose: 'mcp-auth' });
 * ```
 */
export function deriveSealingKey({
  secret,
  purpose,
  option = 'keys',
  index = 0,
}: {
  /** 32+ bytes of secret. */
  secret: SealingSecret;
  /** What the records are; other purposes get other keys. */
  purpose: string;
  /** The option the secret came from, for errors. */
  option?: string;
  /** Its place in a key list, for errors. */
  index?: number;
}): SealingKey {
  const bytes =
    typeof secret === 'string'
      ? Buffer.from(secret, 'utf8')
      : secret instanceof Uint8Array
        ? Buffer.from(secret)
        : undefined;
  if (bytes === undefined || bytes.length < MIN_SECRET_BYTES) {
    throw new InvalidArgumentError({
      argument: index === 0 ? option : `${option}[${index}]`,
      value: '(redacted)',
      message:
        `needs at least ${MIN_SECRET_BYTES} bytes of secret, got ` +
        `${bytes === undefined ? typeof secret : bytes.length}; e.g. \`openssl rand -base64 32\`.`,
    });
  }
  const derive = (info: string, length: number) =>
    Buffer.from(hkdfSync('sha256', bytes, SALT, info, length));
  return {
    // Not bound to the purpose: one secret has one id wherever it is used.
    kid: derive('key-id', 9).toString('base64url'),
    seal: derive(`seal\0${purpose}`, 32),
    hash: Promise.resolve(derive(`id\0${purpose}`, 32)),
  };
}

// Without a secret ids are still keyed, by a random salt kept in the store: not
// secret from whoever reads the store, but no precomputed table of user ids
// fits it. unstorage has no "set if absent", so two processes starting at once
// may both find none and both write one; the last write stays. A process
// therefore keeps a salt only once it has read it without writing first: one
// that just wrote reads the store again on its next use, by when the other
// writer's salt has landed, and so every process ends up on the stored one.
// (Ids hashed in between with a salt that lost are those of records nobody
// finds again: a sign-in to repeat, never another user's record.)
export function saltedIdKey({
  store,
  saltKey,
  purpose,
}: {
  /** Where the salt is kept (a `SealedStoreStorage`). */
  store: Pick<Storage, 'getItem' | 'setItem'>;
  /** Its storage key. */
  saltKey: string;
  /** What the records are. */
  purpose: string;
}): SealingKey {
  let hash: Promise<Buffer> | undefined;
  const derive = (salt: string) =>
    Buffer.from(hkdfSync('sha256', salt, SALT, `id\0${purpose}`, 32));
  const load = async (): Promise<{ key: Buffer; settled: boolean }> => {
    const found = await store.getItem<unknown>(saltKey);
    if (typeof found === 'string') return { key: derive(found), settled: true };
    await store.setItem(saltKey, randomBytes(32).toString('base64url'));
    const stored = await store.getItem<unknown>(saltKey);
    return { key: derive(String(stored)), settled: false };
  };
  return {
    kid: 'plain',
    seal: undefined,
    get hash() {
      if (hash !== undefined) return hash;
      const loading = load();
      hash = loading.then(
        ({ key, settled }) => {
          if (!settled) hash = undefined; // read it again next time: another writer may win
          return key;
        },
        error => {
          hash = undefined; // a store outage must not stick
          throw error;
        },
      );
      return hash;
    },
  };
}

/** A store-safe id: HMAC-SHA256 of `value`, base64url, 32 characters. */
export function hashId(key: Buffer, value: string): string {
  return createHmac('sha256', key).update(value).digest('base64url').slice(0, 32);
}
