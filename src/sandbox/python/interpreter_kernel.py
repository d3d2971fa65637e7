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


_figures = []
_notes = []


def _warm_up():
    import contextlib, importlib.util, io, shutil, warnings
    config = os.environ.get("MPLCONFIGDIR")
    baked = "/usr/share/ai-toolbelt/matplotlib"
    if config and os.path.isdir(baked):
        try:
            shutil.copytree(baked, config, dirs_exist_ok=True)
        except OSError:
            pass

    class Loader:
        def create_module(self, spec):
            return None

        def exec_module(self, module):
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            module.FigureCanvas = FigureCanvasAgg
            module.show = _show

    class Finder:
        def find_spec(self, name, path=None, target=None):
            if name == "ai_toolbelt_backend":
                return importlib.util.spec_from_loader(name, Loader())
            return None

    sys.meta_path.append(Finder())
    os.environ["MPLBACKEND"] = "module://ai_toolbelt_backend"
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name in _PREIMPORT:
                try:
                    __import__(name)
                except BaseException:
                    pass


def _show(*args, **kwargs):
    # As in a notebook: show() hands the open figures to the chat and closes them.
    import matplotlib.pyplot as plt
    _take_figures(plt)


def _take_figures(plt):
    import io
    for number in plt.get_fignums():
        try:
            buffer = io.BytesIO()
            # Cropped to what was drawn, as a notebook shows it: labels are never cut off.
            plt.figure(number).savefig(buffer, format="png", bbox_inches="tight")
            _figures.append(buffer.getvalue())
        except Exception as error:
            _notes.append("figure %s could not be saved as PNG: %s" % (number, error))
    plt.close("all")


def _take_open_figures():
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    try:
        _take_figures(plt)
    except Exception as error:
        _notes.append("figures could not be collected: %s" % error)


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
            _notes.append("input file %r was not placed: outside /tmp" % item["path"])
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        # Replaced, not appended: an attachment sent again overwrites the cell's own copy.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)


def _outputs_snapshot():
    found = {}
    for root, dirs, files in os.walk("/tmp/outputs"):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            found[path] = (info.st_mtime_ns, info.st_size, info.st_ino)
    return found


def _send_artifacts(caps, before):
    import json, mimetypes, stat
    budget = caps["bytes"]

    def add(meta, data):
        nonlocal budget
        if len(data) > budget:
            _notes.append("%s (%d bytes) was not returned: over the %d-byte limit for returned images and files" % (meta["path"], len(data), caps["bytes"]))
            return
        budget -= len(data)
        meta["bytes"] = len(data)
        _send(b"rec", b"file " + json.dumps(meta).encode() + b"\n" + data)

    _take_open_figures()
    for index, data in enumerate(_figures):
        if index >= caps["images"]:
            _notes.append("%d figures were made; only the first %d were returned" % (len(_figures), caps["images"]))
            break
        add({"kind": "image", "path": "figure-%d.png" % (index + 1), "mediaType": "image/png"}, data)
    # Files are returned by the cell that wrote them: new or changed since the cell started.
    after = _outputs_snapshot()
    changed = [path for path, key in after.items() if before.get(path) != key]
    returned = 0
    for path in changed:
        relative = os.path.relpath(path, "/tmp")
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            _notes.append("%s was not returned: not a regular file" % relative)
            continue
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                _notes.append("%s was not returned: not a regular file" % relative)
                continue
            if returned >= caps["files"]:
                _notes.append("%d files were written to /tmp/outputs; only the first %d were returned" % (len(changed), caps["files"]))
                break
            if info.st_size > budget:
                _notes.append("%s (%d bytes) was not returned: over the %d-byte limit for returned images and files" % (relative, info.st_size, caps["bytes"]))
                continue
            chunks, size = [], 0
            while size <= info.st_size:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        finally:
            os.close(fd)
        media = mimetypes.guess_type(path)[0] or "application/octet-stream"
        add({"kind": "file", "path": relative, "mediaType": media}, b"".join(chunks))
        returned += 1
    for note in _notes[: caps.get("notes", 20)]:
        _send(b"rec", b"note " + json.dumps(note).encode() + b"\n")


def _run(source, namespace):
    try:
        exec(compile(source, "<cell>", "exec"), namespace)
        return 0
    except SystemExit as error:
        # As in a notebook, exit() ends the cell, not the interpreter.
        if error.code is None:
            return 0
        if isinstance(error.code, int):
            return error.code & 0xFF
        print(error.code, file=sys.stderr)
        return 1
    except BaseException as error:
        import linecache, traceback
        linecache.cache["<cell>"] = (len(source), None, source.splitlines(True), "<cell>")
        traceback.print_exception(type(error), error, error.__traceback__.tb_next)
        return 1


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
            _place_files(request, stream)
        except EOFError:
            return
        os.makedirs("/tmp/outputs", exist_ok=True)
        before = _outputs_snapshot()
        del _figures[:], _notes[:]
        status = _run(code, main.__dict__)
        for handle in (sys.stdout, sys.stderr):
            try:
                handle.flush()
            except Exception:
                pass
        if request.get("replay"):
            # Restoring state: the cell's figures and files were returned when it first ran.
            _take_open_figures()
        else:
            try:
                _send_artifacts(request["caps"], before)
            except Exception as error:
                _send(b"rec", b"note " + json.dumps("images and files could not be collected: %s" % error).encode() + b"\n")
        del _figures[:], _notes[:]
        _send(b"done", json.dumps({"exitCode": status}).encode())


_warm_up()
os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
_send(b"ready")
_serve()
