import { type NextRequest, NextResponse } from 'next/server';
import { refuseCrossSite } from './lib/same-origin';
import { newNonce, pagePolicy } from './lib/security-headers';
import { USER_COOKIE, knownUserId, servedOverHttps, signedUserId } from './lib/user-id';

/**
 * Runs before the chat page: refuses a foreign `Host` (DNS rebinding) or
 * `Origin` like the routes do, sets the page's Content-Security-Policy with a
 * fresh nonce (on the request too: Next.js reads the nonce there and puts it on
 * its inline scripts), and gives a browser without a user id cookie (or with
 * one the app did not sign) its id: `Secure` when the page was served over
 * https. Only the page issues ids; the routes (chat, sign-in callback, form
 * answers) read them and create nothing for a browser that has none.
 */
export function proxy(request: NextRequest): Response {
  const refused = refuseCrossSite(request);
  if (refused) return refused;
  const policy = pagePolicy(newNonce());
  const headers = new Headers(request.headers);
  headers.set('Content-Security-Policy', policy);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set('Content-Security-Policy', policy);
  if (knownUserId(request) === undefined) {
    response.cookies.set(USER_COOKIE, signedUserId(crypto.randomUUID()), {
      httpOnly: true,
      sameSite: 'lax',
      path: '/',
      ...(servedOverHttps(request) ? { secure: true } : {}),
    });
  }
  return response;
}

// The page only: the API routes check for themselves before reading a body (a proxy would
// buffer every request body first).
export const config = { matcher: '/' };
