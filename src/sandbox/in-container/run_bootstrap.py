# The Python program that runs one-shot code (started by run_supervisor.py as
# `python3 -X utf8 -c SOURCE PREIMPORT GO_FD`).
#
# Lifecycle:
# 1. Copies the image's prebuilt matplotlib font cache into the writable config dir (building it
#    costs ~1 s under gVisor), installs the figure-capturing matplotlib backend, imports the
#    PREIMPORT modules (comma separated; failures ignored: the code gets the real error if it
#    imports them) with their output silenced, then writes the ready marker to stderr. A warm
#    container therefore pays for `import pandas` before any code arrives.
# 2. Waits until the supervisor has read its own first line of stdin (a byte on GO_FD), then
#    reads the rest, which the host writes once and closes:
#    `<nonce>\n<header JSON>\n<code bytes><file bytes>...`; the header gives the code's length,
#    the input files (path, length) and the artifact caps. Files are written under /tmp;
#    /tmp/outputs is created. The input buffer is zeroed after parsing.
# 3. Runs the code as a fresh `__main__` module.
# 4. Right after the code, takes the figures it left open (matplotlib's own exit hook would
#    destroy them). At exit (an `atexit` hook registered first, so it runs after the code's own
#    hooks and after non-daemon threads are joined): flushes both streams, writes the run's
#    artifacts to stdout as records behind the nonce (figures as PNG, regular files under
#    /tmp/outputs, notes about what the caps left out, at most the notes cap), and exits with
#    the code's status. The done marker is the supervisor's, written after this process is gone.
#
# stdout is line buffered, not unbuffered: under runsc, writes to the pipe come back short
# (<= 64 KiB) and Python's unbuffered stdout drops the rest silently (PYTHONUNBUFFERED=1 loses
# output); the buffered writer retries short writes, and records are written with a loop.
import os, sys
from ai_toolbelt_artifacts import Artifacts, output_files, run_code, warm_up
sys.stdout.reconfigure(line_buffering=True)

def _write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]

_artifacts = Artifacts()
_caps = {"images": 0, "files": 0, "bytes": 0, "notes": 20}

warm_up(sys.argv[1].split(",") if len(sys.argv) > 1 and sys.argv[1] else [], _artifacts.show)
_write_all(2, b"\0ai-toolbelt:ready\n")

def _take_input():
    # The supervisor reads its line of stdin first and then says go (see run_supervisor.py).
    if len(sys.argv) > 2:
        go = int(sys.argv[2])
        os.read(go, 1)
        os.close(go)
    # Read with os.read into one bytearray (no io buffer keeps a copy), which is zeroed after.
    data = bytearray()
    while True:
        chunk = os.read(0, 1 << 20)
        if not chunk:
            break
        data += chunk
    del chunk
    fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(fd, 0)
    os.close(fd)
    try:
        return _read_input(data)
    finally:
        data[:] = bytes(len(data))

def _read_input(data):
    import json
    first = data.index(b"\n")
    prefix = b"\0ai-toolbelt:" + bytes(data[:first]) + b":"
    second = data.index(b"\n", first + 1)
    header = json.loads(bytes(data[first + 1 : second]))
    _caps.update(header["caps"])
    offset = second + 1
    code = bytes(data[offset : offset + header["code"]])
    offset += header["code"]
    view = memoryview(data)
    try:
        for item in header["files"]:
            path = os.path.realpath(item["path"])
            if not path.startswith("/tmp/"):
                raise ValueError("input file outside /tmp: %r" % item["path"])
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            try:
                _write_all(fd, view[offset : offset + item["bytes"]])
            finally:
                os.close(fd)
            offset += item["bytes"]
    finally:
        view.release()
    os.makedirs("/tmp/outputs", exist_ok=True)
    return prefix, code

_status = [1]
try:
    _src = _take_input()
except Exception as _e:
    _write_all(2, ("ai-toolbelt sandbox: could not set up the run: %s\n" % _e).encode())
    os._exit(70)

def _collect():
    return _artifacts.records(_caps, list(output_files()))

def _done(prefix):
    for _s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            _s.flush()
        except Exception:
            pass
    try:
        try:
            for record in _collect():
                _write_all(1, prefix + record)
        except BaseException as error:
            import json
            _write_all(1, prefix + b"note " + json.dumps("images and files could not be collected: %s" % error).encode() + b"\n")
    finally:
        os._exit(_status[0])

import atexit, gc
# The prefix is kept only as atexit's argument: no global, no frame on the code's stack, and
# (after the young-generation collection untracks the argument tuple) no referrer gc can list.
# Code can still find it (scanning memory, or through this hook's globals, which gc lists, e.g.
# by wrapping _write_all) and write records of its own: the host counts every record against
# the same caps (RecordBudget) and does not rely on the prefix's secrecy.
atexit.register(_done, _src[0])
_src = _src[1]
gc.collect(0)

def _run():
    _src_text = _src.decode("utf-8", "replace")
    # A fresh __main__ module: pickle finds the code's classes, and the bootstrap's names stay out of sight.
    import types
    _main = types.ModuleType("__main__")
    _main.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = _main
    _globals = _main.__dict__
    sys.argv = ["<sandbox>"]
    return run_code(_src_text, _globals, "<sandbox>")

_status[0] = _run()
_artifacts.take_open()
sys.exit(_status[0])
