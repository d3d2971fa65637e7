import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import { assertStorage, type SealedStoreStorage, type SealingSecret } from './sealed-store.ts';

const warned = new Set<string>();

/**
 * The secrets a {@link SealedStore} seals with, from an option such as
 * `encryptionKey`: one secret or a list (newest first, for rotation). A store
 * that keeps data beyond the process (anything but unstorage's memory driver)
 * is refused without one, unless the app passes `false` on purpose: then it
 * is plain JSON and one warning is emitted per process (per `records` and
 * `option`).
 *
 * @example
 * ```ts
 * const keys = sealingKeys({ store, encryptionKey: process.env.MCP_TOKEN_KEY, option: 'encryptionKey', records: 'MCP tokens' });
 * ```
 */
export function sealingKeys({
  store,
  encryptionKey,
  option = 'encryptionKey',
  records = 'records',
}: {
  /** Where the records go. */
  store: SealedStoreStorage;
  /** The app's option: a secret, a list of secrets (the first writes), or `false` for plain JSON. */
  encryptionKey: SealingSecret | readonly SealingSecret[] | false | undefined;
  /** The option's name, for the error and the warning. */
  option?: string;
  /** What the records hold, for the error and the warning (e.g. `MCP tokens`). */
  records?: string;
}): readonly SealingSecret[] {
  assertStorage(store);
  if (Array.isArray(encryptionKey)) {
    if (encryptionKey.length === 0) {
      throw new InvalidArgumentError({
        argument: option,
        value: [],
        message: 'give at least one key (the first seals new records; the others still open).',
      });
    }
    return encryptionKey as readonly SealingSecret[];
  }
  if (encryptionKey !== undefined && encryptionKey !== false)
    return [encryptionKey as SealingSecret];
  const memory = memoryOnly(store);
  if (encryptionKey === undefined && !memory) {
    throw new InvalidArgumentError({
      argument: option,
      value: undefined,
      message:
        `this store keeps ${records} beyond the process, and without a key they would be plain ` +
        `JSON. Set \`${option}\` to 32+ bytes of secret from your secrets manager or environment ` +
        `(e.g. \`openssl rand -base64 32\`), or pass \`${option}: false\` to store them unencrypted on purpose.`,
    });
  }
  if (encryptionKey === false && !memory && !warned.has(`${records}\0${option}`)) {
    warned.add(`${records}\0${option}`);
    process.emitWarning(
      `\`${option}: false\`: ${records} are stored as plain JSON; anyone who can read the store can use them. ` +
        `Set \`${option}\` (e.g. \`openssl rand -base64 32\`) outside local development.`,
      { type: 'ToolbeltSecurityWarning', code: 'AI_TOOLBELT_PLAINTEXT_STORE' },
    );
  }
  return [];
}

// True only when every mount is unstorage's memory driver: nothing outlives the
// process. Anything else, or a store that cannot tell, counts as persistent.
function memoryOnly(store: SealedStoreStorage): boolean {
  if (typeof store.getMount !== 'function' || typeof store.getMounts !== 'function') return false;
  try {
    const drivers = [store.getMount('').driver, ...store.getMounts('').map(m => m.driver)];
    return drivers.every(driver => driver?.name === 'memory');
  } catch {
    return false;
  }
}
