// Both examples' response headers (issue 45, finding 8) and their user id cookie's `Secure` flag,
// in process: the Hono app through app.request(), the Next.js proxy and config as Next calls them.
// (Served, in Chromium, with no policy violation: test/e2e/.)
import { createToolIndex } from 'ai-toolbelt';
import { NextRequest } from 'next/server.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../examples/hono-server/src/app.ts';
import { appOrigins } from '../../examples/hono-server/src/same-origin.ts';

const next = new URL('../../examples/next-app/', import.meta.url);
type Proxy = (request: NextRequest) => Response;
const { proxy } = (await import(new URL('proxy.ts', next).href)) as { proxy: Proxy };
const { default: nextConfig } = (await import(new URL('next.config.ts', next).href)) as {
  default: {
    poweredByHeader?: boolean;
    headers: () => Promise<{ source: string; headers: { key: string; value: string }[] }[]>;
  };
};

/** A policy's directives by name. */
function directives(policy: string | null): Map<string, string[]> {
  return new Map(
    (policy ?? '')
      .split(';')
      .map(directive => directive.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...values]) => [name!, values]),
  );
}

/** What both examples' pages must send. */
function expectStrictPagePolicy(policy: string | null): void {
  const csp = directives(policy);
  const scripts = csp.get('script-src') ?? [];
  expect(scripts).toContain("'self'");
  expect(scripts.filter(source => !/^'nonce-[\w+/=]{16,}'$/.test(source))).toEqual([
    "'self'",
    "'report-sample'",
  ]);
  expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
  expect(csp.get('object-src')).toEqual(["'none'"]);
  expect(csp.get('base-uri')).toEqual(["'none'"]);
  // Inline styles: the browser checks a DataFrame's (which DOMPurify then removes) as it parses.
  expect(csp.get('style-src')).toEqual(["'self'", "'unsafe-inline'"]);
  expect(csp.get('img-src')).toEqual(["'self'", 'data:', 'blob:']);
  expect(csp.get('connect-src')).toEqual(["'self'"]);
  expect(csp.get('default-src')).toEqual(["'self'"]);
}

describe('hono-server example', () => {
  const app = ({ trustProxy = false } = {}) =>
    createApp({
      origins: appOrigins({ port: 3000 }),
      toolbox: {
        tools: {},
        index: createToolIndex(),
        status: () => ({}),
        // The page hands out an id only with per-user servers; it never asks for a toolbox.
        forUser: () => Promise.reject(new Error('not asked for in these tests')),
      },
      trustProxy,
    });
  const page = (url = 'http://127.0.0.1:3000/', headers: Record<string, string> = {}) =>
    app().request(url, { headers: { host: '127.0.0.1:3000', ...headers } });

  it('sends a strict policy, nosniff and DENY on the page, its scripts and a refusal, and no X-Powered-By', async () => {
    const responses = [
      await page(),
      await page('http://127.0.0.1:3000/assets/chat.js'),
      await page('http://127.0.0.1:3000/api/mcp/callback?code=x'),
      // Refused before any route (a foreign Host): the headers come first.
      await app().request('http://127.0.0.1:3000/', { headers: { host: 'evil.test' } }),
    ];
    expect(responses.map(response => response.status)).toEqual([200, 200, 400, 421]);
    for (const response of responses) {
      expectStrictPagePolicy(response.headers.get('content-security-policy'));
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('referrer-policy')).toBe('same-origin');
      expect(response.headers.has('x-powered-by')).toBe(false);
    }
  });

  it("serves the sign-in callback page's script as a file (the policy runs no inline script)", async () => {
    const asset = await page('http://127.0.0.1:3000/assets/mcp-callback.js');
    expect(asset.status).toBe(200);
    expect(await asset.text()).toContain("postMessage({ type: 'mcp-connected', server }");
  });

  it('makes the user id cookie Secure over https, or behind a trusted proxy that says https', async () => {
    const secure = async (response: Response | Promise<Response>) =>
      /;\s*Secure/i.test((await response).headers.get('set-cookie') ?? '');
    const forwarded = (proto: string, trustProxy: boolean) =>
      app({ trustProxy }).request('http://127.0.0.1:3000/', {
        headers: { host: '127.0.0.1:3000', 'x-forwarded-proto': proto },
      });
    expect(await secure(page())).toBe(false); // http://127.0.0.1: usable without TLS
    expect(await secure(page('https://127.0.0.1:3000/'))).toBe(true);
    expect(await secure(forwarded('https', false))).toBe(false); // anyone can send the header
    expect(await secure(forwarded('https', true))).toBe(true);
    expect(await secure(forwarded('http', true))).toBe(false);
    // The proxy nearest the browser writes the first value.
    expect(await secure(forwarded('http, https', true))).toBe(false);
    expect(await secure(forwarded('HTTPS, http', true))).toBe(true);
  });
});

describe('next-app example', () => {
  const saved = process.env.TRUST_PROXY;
  afterEach(() => {
    if (saved === undefined) delete process.env.TRUST_PROXY;
    else process.env.TRUST_PROXY = saved;
  });
  const page = (url = 'http://127.0.0.1:3000/', headers: Record<string, string> = {}) =>
    proxy(new NextRequest(url, { headers }));

  it("sends the page a strict policy with a fresh nonce, on the response and on Next's copy of the request", () => {
    const [first, second] = [page(), page()];
    const policy = first.headers.get('content-security-policy');
    expectStrictPagePolicy(policy);
    const nonce = directives(policy)
      .get('script-src')!
      .find(source => source.startsWith("'nonce-"));
    expect(nonce).toBeDefined();
    expect(second.headers.get('content-security-policy')).not.toContain(nonce);
    // NextResponse.next({ request: { headers } }): Next.js renders the page with these.
    expect(first.headers.get('x-middleware-request-content-security-policy')).toBe(policy);
  });

  it('sends nosniff, DENY and a policy on every other path, and no X-Powered-By', async () => {
    expect(nextConfig.poweredByHeader).toBe(false);
    const rules = await nextConfig.headers();
    const all = rules.find(rule => rule.source === '/:path*')!.headers;
    expect(all).toEqual(
      expect.arrayContaining([
        { key: 'X-Content-Type-Options', value: 'nosniff' },
        { key: 'X-Frame-Options', value: 'DENY' },
      ]),
    );
    // Not on '/' itself: the page's policy (with its nonce) comes from the proxy.
    const others = rules.find(rule => rule.source === '/:path+')!.headers;
    const policy = directives(
      others.find(header => header.key === 'Content-Security-Policy')!.value,
    );
    expect(policy.get('script-src')).toEqual(["'self'"]);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
    expect(policy.get('default-src')).toEqual(["'none'"]);
  });

  it('makes the user id cookie Secure only when a trusted proxy (TRUST_PROXY=1) says https', () => {
    const secure = (response: Response) =>
      /;\s*Secure/i.test(response.headers.get('set-cookie') ?? '');
    const https = { 'x-forwarded-proto': 'https' };
    delete process.env.TRUST_PROXY;
    expect(secure(page())).toBe(false); // http://127.0.0.1: usable without TLS
    // Next.js fills X-Forwarded-Proto from the client when it sends one: not trusted by default.
    expect(secure(page(undefined, https))).toBe(false);
    process.env.TRUST_PROXY = '1';
    expect(secure(page(undefined, https))).toBe(true);
    expect(secure(page(undefined, { 'x-forwarded-proto': 'http' }))).toBe(false);
    expect(secure(page(undefined, { 'x-forwarded-proto': 'http, https' }))).toBe(false);
    expect(secure(page('https://127.0.0.1:3000/'))).toBe(true);
  });
});
