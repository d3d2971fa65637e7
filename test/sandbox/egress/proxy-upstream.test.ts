// Every connection the proxy opens upstream belongs to the client connection that caused it: it
// goes when the client goes, counts against maxConnections until it is closed, and is bounded by
// a deadline for response headers (issue 45, item 3). The upstream servers here trickle a byte
// now and then, so no idle timer ever ends their connections; each test counts the connections
// they have open. Host-side, on loopback.
import { type ClientRequest, request } from 'node:http';
import type { Socket } from 'node:net';
import { afterAll, expect, it } from 'vitest';
import { proxyHarness, trickleServer } from './proxy-harness.ts';

const harness = proxyHarness();
afterAll(() => harness.close());

/** A plain http:// request through the proxy; resolves once its response head arrives. */
function open(path: string, url: string): Promise<{ req: ClientRequest; status: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: path, path: url, headers: { host: new URL(url).host } });
    req.on('response', res => resolve({ req, status: res.statusCode! }));
    req.on('error', reject);
    req.end();
  });
}

/** A CONNECT tunnel through the proxy; resolves with its socket (after one byte came back) or the refusal's status. */
function tunnel(path: string, target: string): Promise<{ socket?: Socket; status: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: path, method: 'CONNECT', path: target });
    req.on('connect', (res, socket) => {
      if (res.statusCode !== 200) return resolve({ status: res.statusCode! });
      socket.on('error', () => {});
      socket.once('data', () => resolve({ socket, status: 200 }));
      socket.write('hello');
    });
    req.on('error', reject);
    req.end();
  });
}

it('closes the upstream connection of a request whose client left, and counts it until then (http:// and CONNECT)', async () => {
  const body = await trickleServer({ mode: 'body' });
  const raw = await trickleServer({ mode: 'raw' });
  try {
    const { path } = await harness.start({
      allow: [{ host: 'trickle.test', ports: [body.port, raw.port], privateAddresses: true }],
      maxConnections: 4,
      // Long enough that only the client's leaving can end the connections here.
      idleTimeoutMs: 60_000,
    });
    // Eight clients at once, each opening and dropping three requests, then three tunnels.
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = 0; i < 3; i++) {
          const { req, status } = await open(path, `http://trickle.test:${body.port}/`);
          statuses.push(status);
          req.destroy();
        }
        for (let i = 0; i < 3; i++) {
          const { socket, status } = await tunnel(path, `trickle.test:${raw.port}`);
          statuses.push(status);
          socket?.destroy();
        }
      }),
    );
    await expect.poll(() => body.open + raw.open).toBe(0);
    expect(body.peak).toBeLessThanOrEqual(4);
    expect(raw.peak).toBeLessThanOrEqual(4);
    expect(statuses.filter(status => status === 200).length).toBeGreaterThanOrEqual(2);
    expect(statuses.every(status => status === 200 || status === 403)).toBe(true);
  } finally {
    await Promise.all([body.close(), raw.close()]);
  }
});

it('closes the upstream connection when the client leaves before the response head', async () => {
  const slow = await trickleServer({ mode: 'headers' });
  try {
    const { path } = await harness.start({
      allow: [{ host: 'trickle.test', ports: [slow.port], privateAddresses: true }],
      idleTimeoutMs: 60_000,
    });
    const clients: ClientRequest[] = [];
    for (let i = 0; i < 3; i++) {
      const req = request({ socketPath: path, path: `http://trickle.test:${slow.port}/` });
      req.on('error', () => {});
      req.end();
      clients.push(req);
    }
    await expect.poll(() => slow.accepted).toBe(3);
    for (const req of clients) req.destroy();
    await expect.poll(() => slow.open).toBe(0);
  } finally {
    await slow.close();
  }
});

it('answers 504 and closes the upstream connection when its response head does not come within headersTimeoutMs', async () => {
  const slow = await trickleServer({ mode: 'headers' });
  try {
    const { path } = await harness.start({
      allow: [{ host: 'trickle.test', ports: [slow.port], privateAddresses: true }],
      idleTimeoutMs: 60_000,
      headersTimeoutMs: 300,
    });
    const answer = open(path, `http://trickle.test:${slow.port}/`);
    await expect.poll(() => slow.accepted).toBe(1);
    const { status } = await answer;
    expect(status).toBe(504);
    await expect.poll(() => slow.open).toBe(0);
  } finally {
    await slow.close();
  }
});

it('closes an exchange once either connection moved no byte for idleTimeoutMs', async () => {
  // One server answers nothing; the other trickles header bytes to a client that sent only part
  // of its body and then fell silent (only the client's side is idle).
  const silent = await trickleServer({ mode: 'raw', everyMs: 3_600_000 });
  const slow = await trickleServer({ mode: 'headers' });
  try {
    const { path } = await harness.start({
      allow: [{ host: 'trickle.test', ports: [silent.port, slow.port], privateAddresses: true }],
      idleTimeoutMs: 300,
      headersTimeoutMs: 60_000,
    });
    const waiting = request({ socketPath: path, path: `http://trickle.test:${silent.port}/` });
    const ended = new Promise(resolve => waiting.on('close', resolve));
    waiting.on('error', () => {});
    waiting.on('response', res => res.resume());
    waiting.end();
    await ended;
    await expect.poll(() => silent.open).toBe(0);

    const stalled = request({
      socketPath: path,
      method: 'POST',
      path: `http://trickle.test:${slow.port}/`,
      headers: { 'content-length': '100' },
    });
    stalled.on('error', () => {});
    stalled.write('0123456789');
    await expect.poll(() => slow.accepted).toBe(1);
    await expect.poll(() => slow.open, { timeout: 3_000 }).toBe(0);
    stalled.destroy();
  } finally {
    await Promise.all([silent.close(), slow.close()]);
  }
});
