# The conversation interpreter's kernel: one long-lived Python process that runs each cell in the
# same __main__ namespace (globals, imports and files under /tmp persist between cells). Started by
# interpreter_supervisor.py as `python3 -X utf8 -c SOURCE CONTROL_FD RECORDS_FD PREIMPORT`.
#
# CONTROL_FD (read): requests from the supervisor: `<header JSON>\n<code bytes><file bytes>...`.
# RECORDS_FD (write): messages to the supervisor: `<kind> <length>\n<payload>` with kind `ready`
# (once, after the pre-imports), `rec` (an artifact record: `file {json}\n<bytes>` or
# `note "text"\n`) and `done` (the cell's outcome as JSON). The kernel runs the model's code, so
# the supervisor and the host treat everything it sends as untrusted and check it again.
import os, sys
from ai_toolbelt_artifacts import Artifacts, output_files, run_code, warm_up

sys.stdout.reconfigure(line_buffering=True)
sys.stderr.reconfigure(line_buffering=True)

_CONTROL = int(sys.argv[1])
_RECORDS = int(sys.argv[2])
_PREIMPORT = [name for name in sys.argv[3].split(",") if name] if len(sys.argv) > 3 else []


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _send(kind, payload=b""):
    _write_all(_RECORDS, kind + b" %d\n" % len(payload) + payload)


_artifacts = Artifacts()


class _Input:
    """Buffered reads of the control pipe (os.read: no io buffer keeps copies of the code)."""

    def __init__(self, fd):
        self.fd = fd
        self.data = bytearray()

    def _fill(self):
        chunk = os.read(self.fd, 1 << 20)
        if not chunk:
            raise EOFError
        self.data += chunk

    def line(self):
        while b"\n" not in self.data:
            self._fill()
        end = self.data.index(b"\n")
        line = bytes(self.data[:end])
        del self.data[: end + 1]
        return line

    def exactly(self, size):
        while len(self.data) < size:
            self._fill()
        out = bytes(self.data[:size])
        del self.data[:size]
        return out


def _place_files(request, stream):
    for item in request["files"]:
        data = stream.exactly(item["bytes"])
        path = os.path.realpath(os.path.join("/tmp", item["path"]))
        if not path.startswith("/tmp/"):
            _artifacts.notes.append("input file %r was not placed: outside /tmp" % item["path"])
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        # Replaced, not appended: an attachment sent again overwrites the cell's own copy.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)


def _serve():
    import json, types
    stream = _Input(_CONTROL)
    # One __main__ for the whole conversation: pickle finds the cells' classes, and the kernel's
    # own names stay out of the cells' globals.
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = main
    sys.argv = ["<cell>"]
    os.makedirs("/tmp/outputs", exist_ok=True)
    while True:
        try:
            request = json.loads(stream.line())
            code = stream.exactly(request["code"]).decode("utf-8", "replace")
            _artifacts.clear()
            _place_files(request, stream)
        except EOFError:
            return
        os.makedirs("/tmp/outputs", exist_ok=True)
        before = output_files()
        status = run_code(code, main.__dict__, "<cell>")  # exit() ends the cell, as in a notebook
        for handle in (sys.stdout, sys.stderr):
            try:
                handle.flush()
            except Exception:
                pass
        if request.get("replay"):
            # Restoring state: the cell's figures and files were returned when it first ran.
            _artifacts.take_open()
        else:
            # Files are returned by the cell that wrote them: new or changed since it started.
            changed = [path for path, key in output_files().items() if before.get(path) != key]
            try:
                for record in _artifacts.records(request["caps"], changed):
                    _send(b"rec", record)
            except Exception as error:
                _send(b"rec", b"note " + json.dumps("images and files could not be collected: %s" % error).encode() + b"\n")
        _artifacts.clear()
        _send(b"done", json.dumps({"exitCode": status}).encode())


warm_up(_PREIMPORT, _artifacts.show)
os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
_send(b"ready")
_serve()
