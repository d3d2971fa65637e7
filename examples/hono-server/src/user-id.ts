import { randomUUID } from 'node:crypto';
import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';

const COOKIE = 'uid';

/**
 * This browser's user id, issued if it has none: only the chat page calls
 * it. The example has no login, so each browser gets a random id in an
 * HTTP-only cookie when it loads the page; a real app takes the id from its
 * session.
 *
 * @example
 * ```ts
 * app.get('/', c => { issueUserId(c); return c.html(page); });
 * ```
 */
export function issueUserId(c: Context): string {
  const known = knownUserId(c);
  if (known !== undefined) return known;
  const fresh = randomUUID();
  setCookie(c, COOKIE, fresh, { httpOnly: true, sameSite: 'Lax', path: '/' });
  return fresh;
}

/**
 * The user id the page issued to this browser, or undefined: every route but
 * the page reads it and never mints one, so a request from a browser that
 * never loaded the page (a link, an image, a script elsewhere) creates no
 * user, no toolbox and no sign-in state.
 *
 * @example
 * ```ts
 * const userId = knownUserId(c);
 * if (userId === undefined) return c.json({ error: 'Open the chat page first.' }, 403);
 * ```
 */
export function knownUserId(c: Context): string | undefined {
  const value = getCookie(c, COOKIE);
  return value !== undefined && /^[\w-]{16,64}$/.test(value) ? value : undefined;
}
