import { randomBytes, randomUUID } from 'node:crypto';
import type { Context } from 'hono';
import { getSignedCookie, setSignedCookie } from 'hono/cookie';

const COOKIE = 'uid';

/**
 * Signs the user id cookie when `USER_ID_KEY` is not set: random per process, so ids last until a
 * restart. Instances that share a store (REDIS_URL) need the same USER_ID_KEY to accept each
 * other's cookies.
 */
export const PROCESS_USER_ID_KEY = randomBytes(32).toString('base64url');

/**
 * This browser's user id, issued if it has none (or one the app did not sign):
 * only the chat page calls it. The example has no login, so each browser gets
 * a random id in an HTTP-only cookie when it loads the page, signed with
 * `key` (HMAC-SHA256); a real app takes the id from its session. The cookie is
 * `Secure` when the page was served over https (see {@link servedOverHttps}), so it never
 * travels in clear text after that; on http://127.0.0.1 it stays usable.
 *
 * @example
 * ```ts
 * app.get('/', async c => { await issueUserId(c, { key, trustProxy: false }); return c.html(page); });
 * ```
 */
export async function issueUserId(
  c: Context,
  {
    key,
    trustProxy = false,
  }: {
    /** Signs the cookie. */
    key: string;
    /** `X-Forwarded-Proto` counts (the app runs behind a proxy it trusts). */
    trustProxy?: boolean;
  },
): Promise<string> {
  const known = await knownUserId(c, key);
  if (known !== undefined) return known;
  const fresh = randomUUID();
  await setSignedCookie(c, COOKIE, fresh, key, {
    httpOnly: true,
    sameSite: 'Lax',
    path: '/',
    ...(servedOverHttps(c, trustProxy) ? { secure: true } : {}),
  });
  return fresh;
}

/**
 * Whether the browser reached the app over https: the request's own URL, or, with `trustProxy`
 * (`TRUST_PROXY=1`, the app behind a proxy that terminates TLS), the proxy's
 * `X-Forwarded-Proto` (its first value, as the proxy nearest the browser wrote it). Without
 * `trustProxy` the header is ignored: a client can send anything.
 *
 * @example
 * ```ts
 * servedOverHttps(c, true); // true for `X-Forwarded-Proto: https` from the proxy
 * ```
 */
export function servedOverHttps(c: Context, trustProxy: boolean): boolean {
  if (new URL(c.req.url).protocol === 'https:') return true;
  if (!trustProxy) return false;
  const forwarded = c.req.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  return forwarded === 'https';
}

/**
 * The user id the page issued to this browser, or undefined: every route but
 * the page reads it and never mints one, so a request from a browser that
 * never loaded the page (a link, an image, a script elsewhere) creates no
 * user, no toolbox and no sign-in state. Only a cookie signed with `key` counts:
 * a value written by hand (another user's id, say) is no user at all.
 *
 * @example
 * ```ts
 * const userId = await knownUserId(c, key);
 * if (userId === undefined) return c.json({ error: 'Open the chat page first.' }, 403);
 * ```
 */
export async function knownUserId(c: Context, key: string): Promise<string | undefined> {
  const value = await getSignedCookie(c, key, COOKIE);
  return typeof value === 'string' && /^[\w-]{16,64}$/.test(value) ? value : undefined;
}
