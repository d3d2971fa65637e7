/**
 * The chat page's Content-Security-Policy, with this response's `nonce`: scripts only from the
 * app's own files and Next.js's inline scripts carrying the nonce (no 'unsafe-inline', no eval
 * outside `next dev`), images from the app or `data:`/`blob:` URLs (the chat's figures arrive as
 * base64), fonts and requests only to the app, no plugins, no `<base>`, forms posting only here,
 * and no framing by any page. `proxy.ts` sets it; Next.js reads the nonce from the request's copy
 * and puts it on its own scripts. Styles may be inline: a DataFrame's HTML carries a `<style>` and
 * `style` attributes, which DOMPurify removes, but the browser checks them against the policy
 * while it parses that HTML for DOMPurify (and reports each one); inline CSS can load nothing from
 * elsewhere under the rules above.
 *
 * @example
 * ```ts
 * response.headers.set('Content-Security-Policy', pagePolicy(nonce));
 * ```
 */
export function pagePolicy(
  nonce: string,
  development = process.env.NODE_ENV === 'development',
): string {
  return [
    "default-src 'self'",
    // 'report-sample': a violation report carries the start of the code it blocked. React's
    // development build evaluates code to rebuild server error stacks.
    `script-src 'self' 'nonce-${nonce}' 'report-sample'${development ? " 'unsafe-eval'" : ''}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The policy of every other response (API routes, the sign-in callback page, static files):
 * nothing but the app's own scripts (the callback page's /mcp-callback.js) and no framing.
 */
export const OTHER_ROUTES_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Sent with every response (`next.config.ts`): no MIME sniffing, no framing, no referrer off-site. */
export const COMMON_HEADERS = [
  { key: 'X-Content-Type-Options', value: 'nosniff' },
  // For browsers that predate frame-ancestors.
  { key: 'X-Frame-Options', value: 'DENY' },
  // Not no-referrer: browsers would then send `Origin: null` with a form posted to the app, which
  // the routes refuse (lib/same-origin.ts).
  { key: 'Referrer-Policy', value: 'same-origin' },
];

/** A fresh nonce for one response: 128 random bits, base64. */
export function newNonce(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64');
}
