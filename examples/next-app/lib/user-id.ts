import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { NextRequest } from 'next/server';

/** The cookie holding this browser's user id. */
export const USER_COOKIE = 'uid';

// On globalThis, not in module scope: the proxy and each route are bundled separately, and every
// copy of this module must sign and check with the same key. Random per process when
// USER_ID_KEY is unset (ids then last until a restart; instances behind one address need the
// same USER_ID_KEY).
const keys = globalThis as typeof globalThis & { __aiToolbeltUserIdKey?: Buffer };
function userIdKey(): Buffer | string {
  if (process.env.USER_ID_KEY) return process.env.USER_ID_KEY;
  keys.__aiToolbeltUserIdKey ??= randomBytes(32);
  return keys.__aiToolbeltUserIdKey;
}

const signature = (id: string) => createHmac('sha256', userIdKey()).update(id).digest('base64url');

/**
 * The cookie value for a new user id: the id and its HMAC-SHA256 signature, so
 * only ids this app issued are accepted back (`proxy.ts` sets it).
 *
 * @example
 * ```ts
 * response.cookies.set(USER_COOKIE, signedUserId(crypto.randomUUID()), { httpOnly: true });
 * ```
 */
export function signedUserId(id: string): string {
  return `${id}.${signature(id)}`;
}

/**
 * The user id in a cookie value, or undefined unless the app signed it: a
 * value written by hand (another user's id, say) is no user at all.
 *
 * @example
 * ```ts
 * if (userIdFromCookie(request.cookies.get(USER_COOKIE)?.value) === undefined) issueOne();
 * ```
 */
export function userIdFromCookie(value: string | undefined): string | undefined {
  const dot = value?.lastIndexOf('.') ?? -1;
  if (value === undefined || dot < 0) return undefined;
  const id = value.slice(0, dot);
  if (!/^[\w-]{16,64}$/.test(id)) return undefined;
  const given = Buffer.from(value.slice(dot + 1));
  const expected = Buffer.from(signature(id));
  return given.length === expected.length && timingSafeEqual(given, expected) ? id : undefined;
}

/**
 * The user id the chat page gave this browser, or undefined. The example has
 * no login: `proxy.ts` issues a random id in a signed HTTP-only cookie when
 * the page loads (a real app takes the id from its session). Routes only read
 * it, so a request from a browser that never loaded the page (a link, an
 * image, a script elsewhere) creates no user, no toolbox and no sign-in state.
 *
 * @example
 * ```ts
 * const userId = knownUserId(request);
 * const mine = userId === undefined ? toolbox : await toolbox.forUser({ userId });
 * ```
 */
export function knownUserId(request: NextRequest): string | undefined {
  return userIdFromCookie(request.cookies.get(USER_COOKIE)?.value);
}

/**
 * Whether the browser reached the page over https. Next.js hands the app the scheme only as
 * `X-Forwarded-Proto` (it sets one from the connection when the client sent none, and keeps a
 * client's), so it counts only with `TRUST_PROXY=1`: the app runs behind a proxy that
 * terminates TLS and writes that header (its first value, the proxy nearest the browser), or
 * serves https itself (`next dev --experimental-https`). Otherwise the answer is no: any client can
 * send the header, and `next start` speaks plain HTTP.
 *
 * @example
 * ```ts
 * servedOverHttps(request, { TRUST_PROXY: '1' }); // true for `X-Forwarded-Proto: https`
 * ```
 */
export function servedOverHttps(
  request: NextRequest,
  env: Record<string, string | undefined> = process.env,
): boolean {
  if (env.TRUST_PROXY !== '1') return false;
  const forwarded = request.headers.get('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  return (forwarded ?? request.nextUrl.protocol.slice(0, -1)) === 'https';
}
