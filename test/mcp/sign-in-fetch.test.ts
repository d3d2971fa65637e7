// Redirects that sign-in follows by hand: credentials stay with the origin they were meant for.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressPolicy } from '../../src/mcp/auth/address-policy.ts';
import { signInFetch } from '../../src/mcp/auth/sign-in-fetch.ts';

type Seen = { path: string; method: string; headers: IncomingHttpHeaders };

async function listen(handle: (seen: Seen, redirect: (to: string) => void) => void) {
  const seen: Seen[] = [];
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const hit = { path: request.url!, method: request.method!, headers: request.headers };
      seen.push(hit);
      let redirected = false;
      handle(hit, to => {
        redirected = true;
        response.writeHead(307, { location: to }).end();
      });
      if (!redirected) response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { seen, origin, close: () => new Promise<void>(resolve => server.close(() => resolve())) };
}

let other: Awaited<ReturnType<typeof listen>>;
let mcp: Awaited<ReturnType<typeof listen>>;
beforeAll(async () => {
  other = await listen(() => {});
  mcp = await listen((hit, redirect) => {
    if (hit.path === '/token') redirect(`${other.origin}/token`);
    if (hit.path === '/moved') redirect('/token-here');
  });
});
afterAll(async () => {
  await Promise.all([other?.close(), mcp?.close()]);
});

describe('signInFetch redirects', () => {
  const credentials = {
    authorization: 'Bearer app-token',
    cookie: 'session=s3cret',
    'proxy-authorization': 'Basic cHJveHk=',
    'x-kept': 'yes',
  };
  const fetchFor = () =>
    signInFetch({
      server: 'notes',
      serverUrl: `${mcp.origin}/mcp`,
      policy: new AddressPolicy({ server: 'notes', allowed: ['127.0.0.1'] }),
    });

  it('drops Authorization, Cookie and Proxy-Authorization on a hop to another origin', async () => {
    const response = await fetchFor()(`${mcp.origin}/token`, {
      method: 'POST',
      headers: credentials,
      body: 'grant_type=refresh_token',
    });
    expect(response.status).toBe(200);
    expect(mcp.seen.at(-1)!.headers).toMatchObject(credentials);
    const landed = other.seen.at(-1)!;
    expect(landed).toMatchObject({ path: '/token', method: 'POST' });
    expect(landed.headers).toMatchObject({ 'x-kept': 'yes' });
    for (const name of ['authorization', 'cookie', 'proxy-authorization'])
      expect(landed.headers[name]).toBeUndefined();
  });

  it('keeps them on a hop within the same origin', async () => {
    const response = await fetchFor()(`${mcp.origin}/moved`, { headers: credentials });
    expect(response.status).toBe(200);
    expect(mcp.seen.at(-1)).toMatchObject({ path: '/token-here', headers: credentials });
  });
});
