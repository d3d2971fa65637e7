import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { SANDBOX_USER } from '../docker/container-spec.ts';
import { dockerCall } from '../docker/docker-call.ts';
import { FrameDemuxer } from '../docker/frame-demuxer.ts';

/** Runs `command` through `sh -c` after recording the shell's PID, so `kill` can find the tree. */
const WRAPPER = 'echo $$ > "$0"; exec sh -c "$1"';

/**
 * Kills the process recorded in a PID file and all its descendants. Waits briefly for the
 * PID file (kill() may race the command's start), then freezes the tree with SIGSTOP until
 * no new process appears (so nothing forks or gets re-parented mid-kill), then SIGKILLs it.
 */
const KILL_TREE = `import os, signal, sys, time
deadline = time.monotonic() + 5
while True:
    try:
        root = int(open(sys.argv[1]).read())
        break
    except (OSError, ValueError):
        if time.monotonic() > deadline:
            sys.exit(0)
        time.sleep(0.01)
def send(pid, sig):
    try:
        os.kill(pid, sig)
    except OSError:
        pass
frozen = set()
while True:
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                ppid = int(open(f"/proc/{name}/stat").read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    new = [pid for pid in tree if pid not in frozen]
    if not new:
        break
    for pid in new:
        send(pid, signal.SIGSTOP)
        frozen.add(pid)
for pid in frozen:
    send(pid, signal.SIGKILL)
`;

/** Lets exec'd processes learn that their container stopped. */
export type ContainerExitWatch = {
  /** Set once the container has stopped: the error to report. */
  readonly error: Error | undefined;
  /** Calls `listener` when the container stops; returns an unsubscribe function. */
  onExit(listener: () => void): () => void;
};

/** A process started with `docker exec`: demultiplexed output as web streams, exit code, kill. */
export type ExecHandle = {
  stdout: ReadableStream<Uint8Array>;
  stderr: ReadableStream<Uint8Array>;
  stdin: WritableStream<Uint8Array> | undefined;
  /** `status` is `output-limit` when a stream passed `maxOutputBytes` and the tree was killed. */
  wait(): Promise<{ exitCode: number; status: 'exited' | 'output-limit' }>;
  kill(): Promise<void>;
};

/**
 * Starts `command` (a shell command line) in a running container with `docker exec`, as
 * uid 65534. Output streams apply backpressure to the socket; each carries at most
 * `maxOutputBytes` (past it the stream ends there and the process tree is killed). `kill()` kills the command's
 * whole process tree; `abortSignal` does the same and makes `wait()` reject.
 *
 * @example
 * ```ts
 * const handle = await startExec({ container, command: 'ls /', workingDirectory: '/tmp', dockerTimeoutMs: 10_000 });
 * console.log(await handle.wait());
 * ```
 */
export async function startExec({
  container,
  command,
  argv,
  workingDirectory,
  env = {},
  stdin = false,
  abortSignal,
  dockerTimeoutMs,
  containerExit,
  maxOutputBytes = Number.POSITIVE_INFINITY,
}: {
  /** The session's running container. */
  container: Docker.Container;
  /** Shell command line (run with `sh -c`); ignored when `argv` is given. */
  command?: string;
  /** Exact argv instead of a shell command (internal helpers; not killable by tree). */
  argv?: string[];
  /** Absolute working directory. */
  workingDirectory: string;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Keep stdin open and expose it as a writable stream. */
  stdin?: boolean;
  /** Kills the process and rejects `wait()`. */
  abortSignal?: AbortSignal;
  /** Deadline of each Docker call. */
  dockerTimeoutMs: number;
  /**
   * Tells when the container stops. When gVisor ends the whole sandbox, Docker never
   * closes the exec streams; this is what ends them.
   */
  containerExit: ContainerExitWatch;
  /** Bytes per output stream; past it the stream is closed there and the tree killed. */
  maxOutputBytes?: number;
}): Promise<ExecHandle> {
  abortSignal?.throwIfAborted();
  const pidFile = `/tmp/.ai-toolbelt-pid-${Math.random().toString(36).slice(2)}`;
  const cmd = argv ?? ['sh', '-c', WRAPPER, pidFile, command ?? ''];
  const exec = await dockerCall({
    operation: 'exec create',
    timeoutMs: dockerTimeoutMs,
    call: abortSignal_ =>
      container.exec({
        Cmd: cmd,
        AttachStdin: stdin,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        User: SANDBOX_USER,
        WorkingDir: workingDirectory,
        Env: Object.entries(env).map(([key, value]) => `${key}=${value}`),
        abortSignal: abortSignal_,
      }),
  });
  const socket = (await dockerCall({
    operation: 'exec start',
    timeoutMs: dockerTimeoutMs,
    call: () => exec.start({ hijack: true, stdin }),
  })) as Duplex;

  const controllers: Partial<
    Record<'stdout' | 'stderr', ReadableStreamDefaultController<Uint8Array>>
  > = {};
  // Up to 1 MiB per stream is buffered before the socket is paused, so a caller that reads
  // one stream (or only waits) is not stalled by a little output on the other.
  const makeStream = (name: 'stdout' | 'stderr') =>
    new ReadableStream<Uint8Array>(
      {
        start: controller => void (controllers[name] = controller),
        pull: () => void socket.resume(),
        cancel: () => void (controllers[name] = undefined),
      },
      new ByteLengthQueuingStrategy({ highWaterMark: 1024 * 1024 }),
    );
  const stdout = makeStream('stdout');
  const stderr = makeStream('stderr');
  const sent = { stdout: 0, stderr: 0 };
  let overflowed = false;
  const demuxer = new FrameDemuxer({
    onPayload: (name, payload) => {
      if (overflowed) return;
      const controller = controllers[name];
      const room = maxOutputBytes - sent[name];
      const kept = payload.length > room ? payload.subarray(0, room) : payload;
      sent[name] += kept.length;
      if (controller !== undefined && kept.length > 0) controller.enqueue(new Uint8Array(kept));
      if (kept.length < payload.length) {
        // Over the cap: what was kept is delivered, the rest never leaves the socket.
        overflowed = true;
        demuxer.stop();
        closeStreams();
        void kill().catch(() => {});
        socket.resume();
        return;
      }
      if (controller !== undefined && (controller.desiredSize ?? 1) <= 0) socket.pause();
    },
  });
  const closeStreams = () => {
    for (const name of ['stdout', 'stderr'] as const) {
      try {
        controllers[name]?.close();
      } catch {
        // Already closed or errored by the consumer.
      }
      controllers[name] = undefined;
    }
  };
  const ended = new Promise<void>(resolve => {
    const finish = () => {
      closeStreams();
      resolve();
    };
    socket.once('end', finish);
    socket.once('close', finish);
    socket.on('error', finish);
  });
  socket.on('data', (data: Buffer) => demuxer.push(data));
  const unsubscribe = containerExit.onExit(() => socket.destroy());
  if (!stdin) socket.end();

  let killed: Promise<void> | undefined;
  const kill = (): Promise<void> => {
    killed ??= argv
      ? Promise.resolve(void socket.destroy())
      : startExec({
          container,
          argv: ['python3', '-c', KILL_TREE, pidFile],
          workingDirectory: '/tmp',
          dockerTimeoutMs,
          containerExit,
        })
          .then(killer => killer.wait())
          .then(() => undefined);
    return killed;
  };
  const onAbort = () => void kill().catch(() => {});
  abortSignal?.addEventListener('abort', onAbort, { once: true });

  const wait = async (): Promise<{ exitCode: number; status: 'exited' | 'output-limit' }> => {
    await ended;
    abortSignal?.removeEventListener('abort', onAbort);
    abortSignal?.throwIfAborted();
    unsubscribe();
    if (containerExit.error !== undefined) throw containerExit.error;
    // The exit code can lag the end of the stream by a moment.
    for (let attempt = 0; ; attempt++) {
      const info = await dockerCall({
        operation: 'exec inspect',
        timeoutMs: dockerTimeoutMs,
        call: () => exec.inspect(),
      });
      const status = overflowed ? ('output-limit' as const) : ('exited' as const);
      if (!info.Running && info.ExitCode !== null) return { exitCode: info.ExitCode, status };
      if (attempt > 100) return { exitCode: -1, status };
      await new Promise(resolve => setTimeout(resolve, 10));
    }
  };
  let waiting: Promise<{ exitCode: number; status: 'exited' | 'output-limit' }> | undefined;

  const stdinStream = stdin
    ? new WritableStream<Uint8Array>({
        write: chunk =>
          new Promise<void>((resolve, reject) =>
            socket.write(chunk, error => (error ? reject(error) : resolve())),
          ),
        close: () => void socket.end(),
        abort: () => void socket.end(),
      })
    : undefined;

  return {
    stdout,
    stderr,
    stdin: stdinStream,
    wait: () => (waiting ??= wait()),
    kill,
  };
}
