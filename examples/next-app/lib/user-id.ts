import type { NextRequest } from 'next/server';

/** The cookie holding this browser's user id. */
export const USER_COOKIE = 'uid';

/** Whether a cookie value is a user id the app could have issued. */
export function isUserId(value: string | undefined): value is string {
  return value !== undefined && /^[\w-]{16,64}$/.test(value);
}

/**
 * The user id the chat page gave this browser, or undefined. The example has
 * no login: `proxy.ts` issues a random id in an HTTP-only cookie when the page
 * loads (a real app takes the id from its session). Routes only read it, so
 * a request from a browser that never loaded the page (a link, an image, a
 * script elsewhere) creates no user, no toolbox and no sign-in state.
 *
 * @example
 * ```ts
 * const userId = knownUserId(request);
 * const mine = userId === undefined ? toolbox : await toolbox.forUser({ userId });
 * ```
 */
export function knownUserId(request: NextRequest): string | undefined {
  const value = request.cookies.get(USER_COOKIE)?.value;
  return isUserId(value) ? value : undefined;
}
