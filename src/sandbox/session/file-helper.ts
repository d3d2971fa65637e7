import type Docker from 'dockerode';
import { SandboxFileError } from '../../errors/sandbox-file-error.ts';
import { startExec, type ContainerExitWatch } from './exec-process.ts';

/**
 * File operations run inside the session's container by one small Python program, so
 * they obey the same user, read-only root and /tmp rules as the code. Exit 3 means "does
 * not exist", 4 "wrong kind" (a directory where a file is needed, or the reverse), 5 "not a
 * regular file" (a device such as /dev/zero, a FIFO, a socket: never read), 6 "larger than
 * the limit" (argv[3]; checked before reading and while reading, for files that grow or
 * lie about their size, as /proc files do).
 */
const FILE_HELPER = `import json, os, shutil, stat, sys
op, path = sys.argv[1], sys.argv[2]
def kind(mode):
    return "file" if stat.S_ISREG(mode) else "directory" if stat.S_ISDIR(mode) else "other"
if op == "read":
    limit = int(sys.argv[3])
    try: fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError: sys.exit(3)
    st = os.fstat(fd)
    if stat.S_ISDIR(st.st_mode): sys.exit(4)
    if not stat.S_ISREG(st.st_mode): sys.exit(5)
    if st.st_size > limit: sys.exit(6)
    os.set_blocking(fd, True)
    total = 0
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk: break
        total += len(chunk)
        if total > limit: sys.exit(6)
        sys.stdout.buffer.write(chunk)
elif op == "write":
    if os.path.isdir(path): sys.exit(4)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "wb") as f: shutil.copyfileobj(sys.stdin.buffer, f)
elif op == "stat":
    try: st = os.stat(path)
    except FileNotFoundError: sys.exit(3)
    print(json.dumps({"type": kind(st.st_mode), "size": st.st_size}))
elif op == "list":
    if not os.path.exists(path): sys.exit(3)
    if not os.path.isdir(path): sys.exit(4)
    out = []
    for e in os.scandir(path):
        t = "symlink" if e.is_symlink() else kind(e.stat(follow_symlinks=False).st_mode)
        out.append({"name": e.name, "type": t})
    print(json.dumps(out))
elif op == "delete":
    if not os.path.lexists(path): sys.exit(3)
    if os.path.isdir(path) and not os.path.islink(path): sys.exit(4)
    os.unlink(path)
`;

type Operation = 'read' | 'write' | 'stat' | 'list' | 'delete';

/**
 * Runs one file operation on an absolute `path`. Resolves with stdout's bytes, or `null`
 * when the path does not exist; rejects with `SandboxFileError` otherwise.
 *
 * @example
 * ```ts
 * const bytes = await fileOperation({ container, operation: 'read', path: '/tmp/a.txt', dockerTimeoutMs: 10_000 });
 * ```
 */
export async function fileOperation({
  container,
  operation,
  path,
  input,
  abortSignal,
  dockerTimeoutMs,
  containerExit,
  maxBytes = 32 * 1024 * 1024,
}: {
  /** The session's running container. */
  container: Docker.Container;
  /** What to do. */
  operation: Operation;
  /** Absolute path inside the container. */
  path: string;
  /** Bytes to write (operation `write`). */
  input?: ReadableStream<Uint8Array>;
  /** Kills the helper and rejects. */
  abortSignal?: AbortSignal;
  /** Deadline of each Docker call. */
  dockerTimeoutMs: number;
  /** Tells when the container stops (see `startExec`). */
  containerExit: ContainerExitWatch;
  /** Largest file read (and largest result accepted). */
  maxBytes?: number;
}): Promise<Buffer | null> {
  const handle = await startExec({
    container,
    argv: ['python3', '-c', FILE_HELPER, operation, path, String(maxBytes)],
    workingDirectory: '/tmp',
    stdin: input !== undefined,
    abortSignal,
    dockerTimeoutMs,
    containerExit,
  });
  const writing = input !== undefined && handle.stdin ? input.pipeTo(handle.stdin) : undefined;
  // The helper stops at the limit itself; the host cap is the backstop (stdout is buffered,
  // so up to one more chunk can arrive before the helper's exit code says why).
  const [stdout, stderr] = await Promise.all([
    readAll(handle.stdout, maxBytes + (1 << 20)),
    readAll(handle.stderr, 64 * 1024),
  ]).catch((error: unknown) => {
    void handle.kill();
    if (!(error instanceof RangeError)) throw error;
    throw new SandboxFileError({ operation, path, message: `is larger than ${maxBytes} bytes` });
  });
  await writing?.catch(() => {});
  const { exitCode } = await handle.wait();
  if (exitCode === 0) return stdout;
  if (exitCode === 3) return null;
  const text = stderr.toString('utf8').trim().split('\n').at(-1) ?? '';
  throw new SandboxFileError({
    operation,
    path,
    message:
      exitCode === 4
        ? operation === 'list'
          ? 'is not a directory'
          : 'is a directory'
        : exitCode === 5
          ? 'is not a regular file (devices, FIFOs and sockets are not read)'
          : exitCode === 6
            ? `is larger than the ${maxBytes}-byte limit (maxFileBytes)`
            : text || `exit code ${exitCode}`,
  });
}

async function readAll(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    // Throwing inside for-await cancels the stream.
    if (size > maxBytes) throw new RangeError(`sandbox file output exceeds ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
