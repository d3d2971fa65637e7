import { randomBytes } from 'node:crypto';

/**
 * The program every sandbox container starts with. It blocks on stdin, so a warm
 * (pre-started) container and a cold one run code the same way: the host writes
 * `<nonce>\n<code>` and closes stdin.
 *
 * - stdout is line buffered, not unbuffered: under runsc, writes to the pipe come back
 *   short (<= 64 KiB) and Python's unbuffered stdout drops the rest silently
 *   (PYTHONUNBUFFERED=1 loses output); the buffered writer retries short writes.
 * - When the code finishes, an `atexit` hook (registered first, so it runs after the
 *   code's own hooks and after non-daemon threads are joined) flushes both streams and
 *   writes a done marker with the exit status to each. Tearing a gVisor sandbox down takes
 *   ~70 ms; the marker lets the host answer without waiting for it. The marker carries a
 *   per-run nonce, so output cannot end in one by accident. Code that wants to could forge
 *   it, but it can only misreport its own result; the host still kills and removes the
 *   container. Runs that end without a marker (os._exit, signals, OOM, gVisor crashes) are
 *   classified from the container's real exit state instead.
 */
export const BOOTSTRAP_SOURCE = `import os, sys
sys.stdout.reconfigure(line_buffering=True)
_data = sys.stdin.buffer.read()
_fd = os.open(os.devnull, os.O_RDONLY)
os.dup2(_fd, 0)
os.close(_fd)
_nonce, _, _src = _data.partition(b"\\n")
del _data
_status = [1]
def _done():
    for _s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            _s.flush()
        except Exception:
            pass
    _mark = b"\\0ai-toolbelt:" + _nonce + b":" + str(_status[0]).encode() + b"\\n"
    try:
        for _f in (1, 2):
            _b = _mark
            while _b:
                _b = _b[os.write(_f, _b):]
    finally:
        os._exit(_status[0])
import atexit
atexit.register(_done)
def _run():
    _src_text = _src.decode("utf-8", "replace")
    # A fresh __main__ module: pickle finds the code's classes, and the bootstrap's names stay out of sight.
    import types
    _main = types.ModuleType("__main__")
    _main.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = _main
    _globals = _main.__dict__
    sys.argv = ["<sandbox>"]
    try:
        exec(compile(_src_text, "<sandbox>", "exec"), _globals)
        return 0
    except SystemExit as _e:
        if _e.code is None:
            return 0
        if isinstance(_e.code, int):
            return _e.code & 0xFF
        print(_e.code, file=sys.stderr)
        return 1
    except BaseException as _e:
        import linecache, traceback
        linecache.cache["<sandbox>"] = (len(_src_text), None, _src_text.splitlines(True), "<sandbox>")
        traceback.print_exception(type(_e), _e, _e.__traceback__.tb_next)
        return 1
_status[0] = _run()
sys.exit(_status[0])
`;

/** The container's command: `timeout -s KILL` bounds its life even if the host dies. */
export function bootstrapCommand({ ttlMs }: { ttlMs: number }): string[] {
  const ttlSeconds = Math.max(1, Math.ceil(ttlMs / 1000));
  return [
    'timeout',
    '-s',
    'KILL',
    `${ttlSeconds}s`,
    'python3',
    '-X',
    'utf8',
    '-c',
    BOOTSTRAP_SOURCE,
  ];
}

/** A fresh nonce for one run's done marker. */
export function createNonce(): string {
  return randomBytes(16).toString('hex');
}

/** The marker prefix the bootstrap writes; the exit status and `\n` follow it. */
export function markerPrefix(nonce: string): Buffer {
  return Buffer.from(`\0ai-toolbelt:${nonce}:`, 'latin1');
}

/** Longest marker in bytes: prefix + up to 3 digits + newline. */
export function markerMaxBytes(nonce: string): number {
  return markerPrefix(nonce).length + 4;
}
