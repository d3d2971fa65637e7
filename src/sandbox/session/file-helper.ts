import type Docker from 'dockerode';
import { SandboxFileError } from '../../errors/sandbox-file-error.ts';
import { startExec, type ContainerExitWatch } from './exec-process.ts';

/**
 * File operations run inside the session's container by one small Python program, so
 * they obey the same user, read-only root and /tmp rules as the code. Exit 3 means "does
 * not exist", 4 "wrong kind" (a directory where a file is needed, or the reverse).
 */
const FILE_HELPER = `import json, os, shutil, stat, sys
op, path = sys.argv[1], sys.argv[2]
def kind(mode):
    return "file" if stat.S_ISREG(mode) else "directory" if stat.S_ISDIR(mode) else "other"
if op == "read":
    if not os.path.exists(path): sys.exit(3)
    if os.path.isdir(path): sys.exit(4)
    with open(path, "rb") as f: shutil.copyfileobj(f, sys.stdout.buffer)
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
  maxBytes = 256 * 1024 * 1024,
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
  /** Largest result accepted. */
  maxBytes?: number;
}): Promise<Buffer | null> {
  const handle = await startExec({
    container,
    argv: ['python3', '-c', FILE_HELPER, operation, path],
    workingDirectory: '/tmp',
    stdin: input !== undefined,
    abortSignal,
    dockerTimeoutMs,
    containerExit,
  });
  const writing = input !== undefined && handle.stdin ? input.pipeTo(handle.stdin) : undefined;
  const [stdout, stderr] = await Promise.all([
    readAll(handle.stdout, maxBytes),
    readAll(handle.stderr, 64 * 1024),
  ]);
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
