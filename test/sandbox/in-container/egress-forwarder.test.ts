// egress_forwarder.py on the host's python3, without Docker: a tiny wrapper binds a TCP port and
// execs the forwarder with the listening fd, as the supervisors do (egress.py); a Node server on
// a Unix socket plays the host's proxy (it echoes, and says how many bytes it got when the client
// half-closes). Checked: bytes both ways, half-close, the pair cap, a missing socket, resets.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pythonSource } from '../../../src/sandbox/in-container/python-source.ts';

const WRAPPER = `
import os, socket, sys
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(128)
os.set_inheritable(listener.fileno(), True)
print(listener.getsockname()[1], flush=True)
os.execv(sys.executable, [sys.executable, "-I", "-S", "-c", sys.argv[1], str(listener.fileno()), sys.argv[2]])
`;

type Forwarder = { child: ChildProcess; port: number };

async function startForwarder(socketPath: string): Promise<Forwarder> {
  const child = spawn('python3', ['-c', WRAPPER, pythonSource('egress_forwarder'), socketPath], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('\n')) resolve(Number(text.trim()));
    });
    child.once('exit', code => reject(new Error(`the forwarder exited (${code})`)));
  });
  return { child, port };
}

/** The proxy's stand-in: echoes; when the client half-closes, writes `END <bytes>` and ends. */
function echoServer(path: string) {
  const state = { open: 0, most: 0, total: 0, closed: 0, bytes: 0 };
  const server = createServer({ allowHalfOpen: true }, socket => {
    state.total++;
    state.most = Math.max(state.most, ++state.open);
    let bytes = 0;
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      state.bytes += chunk.length;
      // Backpressure: a proxy that reads no more than it can pass on.
      if (!socket.write(chunk)) {
        socket.pause();
        socket.once('drain', () => socket.resume());
      }
    });
    socket.on('end', () => socket.end(`END ${bytes}`));
    socket.on('error', () => {});
    socket.on('close', () => {
      state.open--;
      state.closed++;
    });
  });
  return { server, state };
}

/** Connects to the forwarder; resolves with the socket once connected. */
function connect(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port, allowHalfOpen: true });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Everything the socket receives until its end (or close). */
function collect(socket: Socket): Promise<Buffer> {
  return new Promise(resolve => {
    const chunks: Buffer[] = [];
    const done = () => resolve(Buffer.concat(chunks));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {});
    // Half-open clients see 'end' without 'close' until they end too.
    socket.once('end', done);
    socket.once('close', done);
  });
}

const until = async (check: () => boolean, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise(resolve => setTimeout(resolve, 10));
  }
};

describe('egress_forwarder.py (host python3)', () => {
  let dir: string;
  let socketPath: string;
  let proxy: ReturnType<typeof echoServer>;
  let forwarder: Forwarder;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'atb-egress-'));
    socketPath = join(dir, 'proxy.sock');
    proxy = echoServer(socketPath);
    await new Promise<void>(resolve => proxy.server.listen(socketPath, resolve));
    forwarder = await startForwarder(socketPath);
  });

  afterAll(async () => {
    forwarder?.child.kill('SIGKILL');
    await new Promise(resolve => proxy?.server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('carries 1 MiB both ways, and passes a half-close on (the reply still arrives)', async () => {
    const payload = Buffer.alloc(1 << 20);
    for (let i = 0; i < payload.length; i++) payload[i] = (i * 7919) % 251;
    const socket = await connect(forwarder.port);
    const received = collect(socket);
    socket.end(payload); // writes, then shuts down its write side
    const data = await received;
    expect(data.length).toBe(payload.length + `END ${payload.length}`.length);
    expect(data.subarray(0, payload.length).equals(payload)).toBe(true);
    expect(data.subarray(payload.length).toString()).toBe(`END ${payload.length}`);
  });

  it('a client that half-closes at once gets the reply to its empty request', async () => {
    const socket = await connect(forwarder.port);
    const received = collect(socket);
    socket.end();
    expect((await received).toString()).toBe('END 0');
  });

  it('keeps at most 64 pairs: connections past them are closed, the others work', async () => {
    await until(() => proxy.state.open === 0);
    const before = proxy.state.total;
    const sockets = await Promise.all(Array.from({ length: 70 }, () => connect(forwarder.port)));
    const outcomes = sockets.map(
      socket =>
        new Promise<'echo' | 'closed'>(resolve => {
          socket.once('data', () => resolve('echo'));
          socket.on('error', () => {});
          socket.once('end', () => resolve('closed'));
          socket.once('close', () => resolve('closed'));
          socket.write('ping');
        }),
    );
    const results = await Promise.all(outcomes);
    expect(results.filter(r => r === 'echo')).toHaveLength(64);
    expect(results.filter(r => r === 'closed')).toHaveLength(6);
    expect(proxy.state.total - before).toBe(64);
    expect(proxy.state.most).toBeLessThanOrEqual(64);
    for (const socket of sockets) socket.destroy();
    await until(() => proxy.state.open === 0);
    // The pairs are free again.
    const socket = await connect(forwarder.port);
    const received = collect(socket);
    socket.end('again');
    expect((await received).toString()).toBe('againEND 5');
  });

  it('survives a client that resets mid-stream, and closes the proxy side too', async () => {
    await until(() => proxy.state.open === 0);
    const socket = await connect(forwarder.port);
    socket.on('error', () => {});
    socket.pause(); // reads nothing: both directions fill up
    const before = proxy.state.bytes;
    // More than the forwarder's buffers and the kernel's socket buffers hold.
    socket.write(Buffer.alloc(64 << 20));
    await new Promise(resolve => setTimeout(resolve, 500));
    // Nobody reads the echo, so the forwarder stopped reading either side.
    expect(socket.writableLength).toBeGreaterThan(0);
    expect(proxy.state.bytes - before).toBeLessThan(64 << 20);
    expect(proxy.state.open).toBe(1);
    socket.resetAndDestroy();
    await until(() => proxy.state.open === 0);
    const next = await connect(forwarder.port);
    const received = collect(next);
    next.end('still here');
    expect((await received).toString()).toBe('still hereEND 10');
  });

  it('ignores SIGINT (the interrupt meant for a cell)', async () => {
    forwarder.child.kill('SIGINT');
    await new Promise(resolve => setTimeout(resolve, 200));
    expect(forwarder.child.exitCode).toBe(null);
    const socket = await connect(forwarder.port);
    const received = collect(socket);
    socket.end('x');
    expect((await received).toString()).toBe('xEND 1');
  });

  it('delivers the answer of a proxy that refuses and closes while the client still sends', async () => {
    const refusing = createServer(socket => {
      socket.on('error', () => {});
      socket.once('data', () =>
        socket.end('HTTP/1.1 403 Forbidden\r\n\r\n', () => socket.destroy()),
      );
    });
    const path = join(dir, 'refusing.sock');
    await new Promise<void>(resolve => refusing.listen(path, resolve));
    const own = await startForwarder(path);
    try {
      const socket = await connect(own.port);
      const received = collect(socket);
      socket.write(Buffer.alloc(8 << 20)); // a request body that goes on
      expect((await received).toString()).toBe('HTTP/1.1 403 Forbidden\r\n\r\n');
      socket.destroy();
      expect(own.child.exitCode).toBe(null);
    } finally {
      own.child.kill('SIGKILL');
      await new Promise(resolve => refusing.close(resolve));
    }
  });

  it('closes the client when the Unix socket is not there', async () => {
    const missing = await startForwarder(join(dir, 'missing.sock'));
    try {
      for (let i = 0; i < 3; i++) {
        const socket = await connect(missing.port);
        const received = collect(socket);
        socket.write('hello');
        expect((await received).length).toBe(0);
        socket.destroy();
      }
      expect(missing.child.exitCode).toBe(null);
    } finally {
      missing.child.kill('SIGKILL');
    }
  });
});
