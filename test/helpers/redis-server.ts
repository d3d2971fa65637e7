import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createConnection, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'vitest';

/** A throwaway redis-server on 127.0.0.1 (no persistence), owned by the test process. */
export type RedisServer = {
  port: number;
  /** `redis://127.0.0.1:PORT`. */
  url: string;
  /** Ends the server (SIGTERM, then waits for exit). Idempotent. */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
};

const missing = (() => {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'redis-server is not installed (Debian: apt-get install -y redis-server)';
  }
})();

/**
 * `describe` for tests that need a real redis-server: in CI (CI set) the suite
 * fails when it is missing; elsewhere it is skipped with one line.
 */
export function describeRedis(name: string, body: () => void): void {
  if (missing === undefined) {
    describe(name, body);
    return;
  }
  if (process.env.CI) {
    describe(name, () => {
      it('needs redis-server (CI must run the Redis suite)', () => {
        throw new Error(`Redis suite cannot run in CI: ${missing}`);
      });
    });
    return;
  }
  console.log(`[redis tests skipped] ${name}: ${missing}`);
  describe.skip(name, body);
}

/**
 * Starts redis-server as a child process on a free port (never daemonised, so
 * it cannot outlive the tests) and waits until it answers PING.
 *
 * @example
 * await using redis = await startRedisServer();
 * const store = createStorage({ driver: redisDriver({ url: redis.url }) });
 */
export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    const proc = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    child = proc;
    const deadline = Date.now() + 10_000;
    while (!(await pings(port))) {
      if (proc.exitCode !== null) throw new Error(`redis-server exited with ${proc.exitCode}`);
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${port}`);
      await sleep(20); // polling for readiness, not waiting to pass
    }
  };
  const stop = async () => {
    const proc = child;
    child = undefined;
    if (proc === undefined || proc.exitCode !== null) return;
    const exited = once(proc, 'exit');
    proc.kill('SIGTERM');
    await exited;
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop,
    start,
    [Symbol.asyncDispose]: stop,
  };
}

async function pings(port: number): Promise<boolean> {
  return new Promise(resolve => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', data => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise(resolve => server.close(resolve));
  return port;
}
