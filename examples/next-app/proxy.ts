import { type NextRequest, NextResponse } from 'next/server';
import { refuseCrossSite } from './lib/same-origin';
import { USER_COOKIE, knownUserId, signedUserId } from './lib/user-id';

/**
 * Runs before the chat page: refuses a foreign `Host` (DNS rebinding) or
 * `Origin` like the routes do, and gives a browser without one (or with one
 * the app did not sign) its user id cookie. Only the page issues ids; the routes (chat, sign-in callback, form
 * answers) read them and create nothing for a browser that has none.
 */
export function proxy(request: NextRequest): Response {
  const refused = refuseCrossSite(request);
  if (refused) return refused;
  const response = NextResponse.next();
  if (knownUserId(request) === undefined) {
    response.cookies.set(USER_COOKIE, signedUserId(crypto.randomUUID()), {
      httpOnly: true,
      sameSite: 'lax',
      path: '/',
    });
  }
  return response;
}

// The page only: the API routes check for themselves before reading a body (a proxy would
// buffer every request body first).
export const config = { matcher: '/' };
