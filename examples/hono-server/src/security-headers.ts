import type { MiddlewareHandler } from 'hono';
import { secureHeaders } from 'hono/secure-headers';

/**
 * The page's Content-Security-Policy: scripts only from the app's own files (no inline script, no
 * eval), images from the app or `data:`/`blob:` URLs (the chat's figures arrive as base64), fonts
 * and requests only to the app, no plugins, no `<base>`, forms posting only here, and no framing
 * by any page. A script that slipped past DOMPurify could not run, and nothing on the page can
 * send what it reads anywhere but here. Styles may be inline: a DataFrame's HTML carries a
 * `<style>` and `style` attributes, which DOMPurify removes, but the browser checks them against
 * the policy while it parses that HTML for DOMPurify (and reports each one); inline CSS can load
 * nothing from elsewhere under the rules above.
 */
export const CONTENT_SECURITY_POLICY = {
  defaultSrc: ["'self'"],
  // 'report-sample': a violation report carries the start of the code it blocked.
  scriptSrc: ["'self'", "'report-sample'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:', 'blob:'],
  fontSrc: ["'self'"],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
};

/**
 * Hono's secure headers on every response: the CSP above, `X-Content-Type-Options: nosniff`,
 * `X-Frame-Options: DENY` (for browsers that predate `frame-ancestors`), `Referrer-Policy:
 * same-origin`, no `X-Powered-By`. Left out on purpose: `Referrer-Policy: no-referrer` (Hono's
 * default: browsers then send `Origin: null` with a form posted to the app, which `sameOrigin`
 * refuses; the page's `fetch` calls keep theirs), `Cross-Origin-Opener-Policy` (the MCP sign-in
 * tab tells the chat it is done through `window.opener`, which COOP would cut) and
 * `Strict-Transport-Security` (the app speaks plain HTTP on 127.0.0.1; HSTS belongs to whatever
 * terminates TLS in front of it).
 *
 * @example
 * ```ts
 * app.use('*', securityHeaders());
 * ```
 */
export function securityHeaders(): MiddlewareHandler {
  return secureHeaders({
    contentSecurityPolicy: CONTENT_SECURITY_POLICY,
    xFrameOptions: 'DENY',
    referrerPolicy: 'same-origin',
    crossOriginOpenerPolicy: false,
    strictTransportSecurity: false,
  });
}
