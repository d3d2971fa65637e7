// What both examples must send with their page (issue 45, finding 8), checked on the real server
// and in Chromium: the headers, and that another site cannot frame the page.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext } from 'playwright-core';
import { expect } from 'vitest';

/**
 * Loads the page and checks its response: a Content-Security-Policy that runs no inline script
 * without a nonce (`script-src 'self'`), forbids framing, plugins and `<base>`; `nosniff`;
 * `X-Frame-Options: DENY`; no `X-Powered-By`. Then a page on another origin (a server started
 * here, on loopback) frames it, and Chromium must refuse to show it there.
 *
 * @example
 * await checkSecurityHeaders({ context, url: 'http://127.0.0.1:3000/' });
 */
export async function checkSecurityHeaders({
  context,
  url,
}: {
  /** A browser context to open the pages in. */
  context: BrowserContext;
  /** The example's page. */
  url: string;
}): Promise<void> {
  const page = await context.newPage();
  const response = await page.goto(url);
  const headers = response!.headers();
  const policy = new Map(
    (headers['content-security-policy'] ?? '')
      .split(';')
      .map(directive => directive.trim().split(/\s+/))
      .map(([name, ...values]) => [name, values] as const),
  );
  const scripts = policy.get('script-src') ?? [];
  expect(scripts).toContain("'self'");
  // Its own files, and (Next.js) inline scripts carrying the response's nonce: nothing else runs.
  expect(scripts.filter(source => !source.startsWith("'nonce-"))).toEqual([
    "'self'",
    "'report-sample'",
  ]);
  expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
  expect(policy.get('object-src')).toEqual(["'none'"]);
  expect(policy.get('base-uri')).toEqual(["'none'"]);
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['x-powered-by']).toBeUndefined();

  // Another origin (another port on loopback) frames the page: Chromium shows its error page.
  const framer = createServer((_request, reply) => {
    reply.setHeader('content-type', 'text/html');
    reply.end(`<!doctype html><iframe src="${url}"></iframe>`);
  });
  await new Promise<void>(resolve => framer.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = framer.address() as AddressInfo;
    await page.goto(`http://127.0.0.1:${port}/`);
    const framed = () =>
      page
        .frames()
        .find(frame => frame !== page.mainFrame())
        ?.url();
    await expect.poll(framed).not.toMatch(/^(about:blank)?$/);
    // Chromium's error page in place of the chat.
    expect(framed()).toMatch(/^chrome-error:/);
  } finally {
    await page.close();
    // Chromium keeps its connection open: end it, or close() waits for it.
    framer.closeAllConnections();
    await new Promise(resolve => framer.close(resolve));
  }
}
