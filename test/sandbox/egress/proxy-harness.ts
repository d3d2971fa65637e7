// Shared by the host-side proxy tests: a proxy on a Unix socket whose resolver maps test names
// to loopback, raw requests to it, and an upstream server that counts its open connections and
// trickles a byte now and then. Everything stays on loopback.
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type EgressOptions,
  resolveEgressOptions,
} from '../../../src/sandbox/egress/egress-options.ts';
import { EgressProxy } from '../../../src/sandbox/egress/egress-proxy.ts';
import type { EgressRefusal } from '../../../src/sandbox/types.ts';

/** A scratch directory for sockets, and proxies started in it; `close()` ends them all. */
export function proxyHarness() {
  const dir = mkdtempSync(join(tmpdir(), 'egress-proxy-harness-'));
  const proxies: EgressProxy[] = [];
  let socketNumber = 0;
  return {
    dir,
    /** A proxy whose resolver maps every `*.test` name to 127.0.0.1. */
    async start(options: EgressOptions, refusals: EgressRefusal[] = []) {
      const egress = resolveEgressOptions({
        resolve: async host => {
          if (!host.endsWith('.test')) throw Object.assign(new Error('x'), { code: 'ENOTFOUND' });
          return ['127.0.0.1'];
        },
        ...options,
      });
      const path = join(dir, `proxy-${socketNumber++}.sock`);
      const proxy = await EgressProxy.listen({
        egress,
        path,
        onRefused: refusal => refusals.push(refusal),
      });
      proxies.push(proxy);
      return { proxy, path };
    },
    async close() {
      await Promise.all(proxies.map(proxy => proxy.close()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Sends `head` as it is on a new connection to the proxy; resolves with all it answered. */
export function rawExchange(path: string, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    const chunks: Buffer[] = [];
    socket.on('data', chunk => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString()));
    socket.write(head);
  });
}

/**
 * A TCP server that counts its open connections (now and at most at once). Once a client sends
 * something it answers per `mode` and then writes one byte every `everyMs`, forever:
 * `body`: a 200 response head, then body bytes (an endless download);
 * `headers`: a status line, then header bytes that never end;
 * `raw`: only the bytes (what a tunnel carries).
 */
export async function trickleServer({
  mode,
  everyMs = 50,
}: {
  mode: 'body' | 'headers' | 'raw';
  everyMs?: number;
}) {
  const open = new Set<Socket>();
  let peak = 0;
  let accepted = 0;
  const server: Server = createServer(socket => {
    open.add(socket);
    accepted++;
    peak = Math.max(peak, open.size);
    let timer: NodeJS.Timeout | undefined;
    socket.on('error', () => {});
    socket.once('close', () => {
      open.delete(socket);
      clearInterval(timer);
    });
    socket.once('data', () => {
      if (mode === 'body') socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n');
      if (mode === 'headers') socket.write('HTTP/1.1 200 OK\r\nX-Slow: ');
      timer = setInterval(() => socket.write('a'), everyMs);
    });
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    /** Connections open now. */
    get open() {
      return open.size;
    },
    /** Most connections open at once. */
    get peak() {
      return peak;
    },
    /** Connections accepted in all. */
    get accepted() {
      return accepted;
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise(resolve => server.close(resolve));
    },
  };
}
