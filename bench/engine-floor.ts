// The engine floor of bench:sandbox: what the Docker engine sustains for one-use containers
// run exactly the way the sandbox runs them, without the sandbox's own code. Like for like:
// - the same container (containerSpec, same limits, image and runtime);
// - the same command: `timeout -s KILL <ttl> python3 -c BOOTSTRAP`, pre-imports off;
// - the same I/O: attach with stdin before start, the run input written to stdin, the output
//   read until the stream ends, `docker wait` for the exit code;
// - the same teardown: every container is force-removed and its removal waited for (the
//   sandbox holds a run's slot until its container is gone);
// - the same start concurrency: `workers` loops, each one container at a time, so at most
//   `workers` containers are created and started at once (the sandbox's
//   `maxConcurrentStarts`).
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { bootstrapCommand, createNonce, encodeRunInput } from '../src/sandbox/bootstrap.ts';
import { containerSpec } from '../src/sandbox/container-spec.ts';
import { FrameDemuxer } from '../src/sandbox/frame-demuxer.ts';

/**
 * Runs `print(1)` through bare containers for `seconds` with `workers` loops; returns the runs
 * and the time they took (runs / s is the floor).
 *
 * @example
 * ```ts
 * const { count, ms } = await engineFloor({ docker, image, runtime: 'runsc', workers: 2, seconds: 15 });
 * ```
 */
export async function engineFloor({
  docker,
  image,
  runtime,
  workers,
  seconds,
}: {
  /** Docker client. */
  docker: Docker;
  /** The sandbox image. */
  image: string;
  /** The runtime the sandbox uses (runsc). */
  runtime: string;
  /** Loops at once (the sandbox's start concurrency). */
  workers: number;
  /** How long to measure. */
  seconds: number;
}): Promise<{ count: number; ms: number }> {
  const ttlMs = 60_000;
  // Labelled like the sandbox's (containerSpec), so the bench's leak check sees them too.
  const spec = containerSpec({
    limits: {
      image,
      runtime,
      memoryBytes: 256 * 1024 * 1024,
      cpus: 1,
      pidsLimit: 128,
      tmpfsMiB: 32,
    },
    cmd: bootstrapCommand({ ttlMs, preimport: [] }),
    ttlMs,
    kind: 'execute',
    openStdin: true,
  });
  const caps = { images: 10, files: 20, bytes: 8 * 1024 * 1024 };
  const once = async (): Promise<void> => {
    const container = await docker.createContainer(spec);
    try {
      const socket = (await container.attach({
        stream: true,
        stdin: true,
        stdout: true,
        stderr: true,
        hijack: true,
      })) as Duplex;
      let stdout = '';
      const demuxer = new FrameDemuxer({
        onPayload: (stream, payload) => {
          if (stream === 'stdout') stdout += payload.toString('latin1');
        },
      });
      const ended = new Promise<void>(resolve => {
        socket.on('data', (data: Buffer) => demuxer.push(data));
        socket.once('end', resolve);
        socket.once('close', resolve);
        socket.once('error', resolve);
      });
      await container.start();
      const exited = container.wait() as Promise<{ StatusCode: number }>;
      const input = encodeRunInput({
        proof: createNonce(),
        nonce: createNonce(),
        code: 'print(1)',
        files: [],
        caps,
      });
      for (const chunk of input.slice(0, -1)) socket.write(chunk);
      socket.end(input.at(-1));
      await ended;
      const { StatusCode } = await exited;
      socket.destroy();
      if (StatusCode !== 0 || !stdout.startsWith('1\n')) {
        throw new Error(
          `engine floor run failed: exit ${StatusCode}, stdout ${JSON.stringify(stdout)}`,
        );
      }
    } finally {
      await container.remove({ force: true });
    }
  };
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  let count = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < deadline) {
        await once();
        count++;
      }
    }),
  );
  return { count, ms: performance.now() - started };
}
