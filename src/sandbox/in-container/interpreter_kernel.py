# The conversation interpreter's kernel: one long-lived Python process that runs each cell in the
# same __main__ namespace (globals, imports and files under /tmp persist between cells). Started by
# interpreter_supervisor.py as `python3 -X utf8 -c SOURCE CONTROL_FD RECORDS_FD PREIMPORT`.
#
# CONTROL_FD (read): requests from the supervisor: `<header JSON>\n<code bytes><file bytes>...`.
# RECORDS_FD (write): messages to the supervisor: `<kind> <length>\n<payload>` with kind `ready`
# (once, after the pre-imports), `rec` (an artifact record: `file {json}\n<bytes>` or
# `note "text"\n`, `result {json}\n` for a shown value, `chart {json}\n` for a figure's data) and
# `done` (the cell's outcome as JSON). The kernel runs the model's code, so the supervisor and the
# host treat everything it sends as untrusted and check it again.
#
# A cell runs as a notebook cell (display.py). On its deadline the supervisor sends SIGINT: the
# cell gets a KeyboardInterrupt and the state stays; it is killed only if it does not stop.
# `%pip install ...` lines run pip (artifacts.py); with an egress policy (AI_TOOLBELT_EGRESS_SOCKET
# set) the import system's caches are also cleared before each cell, so a package pip installed
# in one cell, by any means, imports in the next.
import os, signal, sys
from ai_toolbelt_artifacts import Artifacts, output_files, warm_up
from ai_toolbelt_charts import chart_data
from ai_toolbelt_display import install, mime_bundle, run_cell

sys.stdout.reconfigure(line_buffering=True)
sys.stderr.reconfigure(line_buffering=True)

_CONTROL = int(sys.argv[1])
_RECORDS = int(sys.argv[2])
_PREIMPORT = [name for name in sys.argv[3].split(",") if name] if len(sys.argv) > 3 else []
_EGRESS = bool(os.environ.get("AI_TOOLBELT_EGRESS_SOCKET"))


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _send(kind, payload=b""):
    _write_all(_RECORDS, kind + b" %d\n" % len(payload) + payload)


_artifacts = Artifacts(chart_data=chart_data)
# Caps of the cell running (the request's), for values shown while it runs.
_cell = {"caps": None, "results": 0, "maxResultChars": 0}
_running = [False]
_pending = [False]


def _interrupt(signum, frame):
    # Only the model's code is interrupted. One that arrives while the kernel itself sends a
    # record (a half-written record would break the protocol) waits until the record is out.
    if _running[0]:
        raise KeyboardInterrupt
    _pending[0] = True


def _set_running(value):
    _running[0] = value
    if value and _pending[0]:
        _pending[0] = False
        raise KeyboardInterrupt


def _show(value, main):
    """Sends a shown value as a `result` record now, so it keeps its place among the prints."""
    import json
    caps = _cell["caps"]
    if caps is None:
        return  # between cells (a thread the code left running): nobody asked for it
    for handle in (sys.stdout, sys.stderr):
        try:
            handle.flush()
        except Exception:
            pass
    if _cell["results"] >= caps.get("results", 0):
        if _cell["results"] == caps.get("results", 0):
            _artifacts.notes.append("more values were shown; only the first %d were returned" % caps.get("results", 0))
        _cell["results"] += 1
        return
    _cell["results"] += 1
    # Formatting runs the value's own code (a big table's HTML): it stays interruptible.
    data, chart, notes = mime_bundle(value, _cell["maxResultChars"], chart_data)
    _artifacts.notes.extend(notes)
    result = {"main": bool(main), "data": data}
    if chart is not None:
        result["chart"] = chart
    try:
        line = json.dumps(result, allow_nan=False).encode()
    except (TypeError, ValueError):
        line = json.dumps({"main": bool(main), "data": {"text/plain": data["text/plain"]}}).encode()
    if _artifacts.spent + len(line) > caps["bytes"]:
        _artifacts.notes.append("a shown value was not returned: over the limit for returned images and files")
        return
    _artifacts.spent += len(line)
    was_running = _running[0]
    _running[0] = False
    try:
        _send(b"rec", b"result " + line + b"\n")
    finally:
        _set_running(was_running)


def _seed(seed):
    """Seeds `random` and NumPy's global generator from the conversation: a replay of its cells
    in a new interpreter draws the same numbers. NumPy not imported yet is seeded when the code
    first imports it (importing it here would cost a cell seconds under gVisor)."""
    import importlib.util, random
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % (1 << 32))
        return

    class SeedOnImport:
        def find_spec(self, name, path=None, target=None):
            if name != "numpy":
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec("numpy")
            if spec is None or spec.loader is None:
                return spec
            run = spec.loader.exec_module

            def exec_and_seed(module):
                run(module)
                module.random.seed(seed % (1 << 32))

            spec.loader.exec_module = exec_and_seed
            return spec

    sys.meta_path.insert(0, SeedOnImport())


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
        if isinstance(request.get("seed"), int):
            _seed(request["seed"])
        if _EGRESS:
            import importlib
            importlib.invalidate_caches()
        before = output_files()
        _pending[0] = False  # an interrupt meant for the cell before
        # A replayed cell shows nothing: what it showed was returned when it first ran.
        caps = None if request.get("replay") else request["caps"]
        _cell.update(caps=caps, results=0, maxResultChars=int(request.get("maxResultChars", 20000)))
        # exit() ends the cell, as in a notebook
        status = run_cell(code, main.__dict__, "<cell>", _show, _set_running)
        _cell["caps"] = None
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
install(_show)
signal.signal(signal.SIGINT, _interrupt)
os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
_send(b"ready")
_serve()
