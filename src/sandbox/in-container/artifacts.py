# What a run (run_bootstrap.py) or a cell (interpreter_kernel.py) hands back besides its output:
# figures as PNG, files under /tmp/outputs, notes about what the caps left out. The host loads
# this module into both programs as `ai_toolbelt_artifacts` (see python-source.ts), so the code
# they run could call it too: nothing here is secret, and the host counts every record again.
import os, sys


def warm_up(preimport, show):
    """Prepares matplotlib and imports `preimport` (module names) silently, before any code.

    Copies the image's prebuilt font cache into the writable config dir (building it costs ~1 s
    under gVisor) and installs a backend whose show() calls `show`; failed imports are ignored
    (the code gets the real error if it imports them itself).
    """
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
            module.show = show

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
            for name in preimport:
                try:
                    __import__(name)
                except BaseException:
                    pass


def run_code(code, namespace, filename, source=None):
    """Runs `code` (text, or a callable that runs it) in `namespace` as a script runs: its exit
    status, 0 when it ends.

    exit() and sys.exit() end the code, not the program running it, with their status (text
    goes to stderr, status 1); any other exception prints its traceback from the code's first
    frame on (`filename`'s), the code's own lines (`source`) included.
    """
    source = code if source is None else source
    try:
        if callable(code):
            code()
        else:
            exec(compile(code, filename, "exec"), namespace)
        return 0
    except SystemExit as error:
        if error.code is None:
            return 0
        if isinstance(error.code, int):
            return error.code & 0xFF
        print(error.code, file=sys.stderr)
        return 1
    except BaseException as error:
        import linecache, traceback
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        first = error.__traceback__
        while first is not None and first.tb_frame.f_code.co_filename != filename:
            first = first.tb_next
        traceback.print_exception(type(error), error, first or error.__traceback__.tb_next)
        return 1


def output_files():
    """Every file under /tmp/outputs (any kind), in a stable order, with what identifies its version."""
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


class Artifacts:
    """The figures and notes of one run or cell, and the records that return them."""

    def __init__(self, chart_data=None):
        self.figures = []  # (PNG bytes, chart data or None)
        self.notes = []
        # Bytes already returned by this cell's shown results (they share the bytes cap).
        self.spent = 0
        # Reads a figure's chart as data (charts.py), where the program returns charts.
        self.chart_data = chart_data

    def show(self, *args, **kwargs):
        # As in a notebook: show() hands the open figures to the chat and closes them.
        import matplotlib.pyplot as plt
        self._take(plt)

    def take_open(self):
        """Takes the figures left open (before matplotlib's own exit hook destroys them)."""
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is None:
            return
        try:
            self._take(plt)
        except Exception as error:
            self.notes.append("figures could not be collected: %s" % error)

    def _take(self, plt):
        import io
        for number in plt.get_fignums():
            try:
                buffer = io.BytesIO()
                figure = plt.figure(number)
                chart = self.chart_data(figure) if self.chart_data is not None else None
                # Cropped to what was drawn, as a notebook shows it: labels are never cut off.
                figure.savefig(buffer, format="png", bbox_inches="tight")
                self.figures.append((buffer.getvalue(), chart))
            except Exception as error:
                self.notes.append("figure %s could not be saved as PNG: %s" % (number, error))
        plt.close("all")

    def clear(self):
        del self.figures[:], self.notes[:]
        self.spent = 0

    def records(self, caps, paths):
        """The records returning the figures, the regular files among `paths` and the notes,
        within `caps` (images, files, bytes of both, notes): `file {json}\\n<bytes>` and
        `note "text"\\n`. What the caps leave out is said in a note."""
        import json, mimetypes, stat
        budget = caps["bytes"] - self.spent
        records = []

        def add(meta, data):
            nonlocal budget
            if len(data) > budget:
                self.notes.append("%s (%d bytes) was not returned: over the %d-byte limit for returned images and files" % (meta["path"], len(data), caps["bytes"]))
                return
            budget -= len(data)
            meta["bytes"] = len(data)
            records.append(b"file " + json.dumps(meta).encode() + b"\n" + data)
            return True

        self.take_open()
        for index, (data, chart) in enumerate(self.figures):
            if index >= caps["images"]:
                self.notes.append("%d figures were made; only the first %d were returned" % (len(self.figures), caps["images"]))
                break
            path = "figure-%d.png" % (index + 1)
            if add({"kind": "image", "path": path, "mediaType": "image/png"}, data) and chart is not None:
                # The chart's data follows its image, counted against the same bytes.
                try:
                    line = json.dumps({"path": path, "chart": chart}, allow_nan=False).encode()
                except (TypeError, ValueError):
                    line = None
                if line is not None and len(line) <= budget:
                    budget -= len(line)
                    records.append(b"chart " + line + b"\n")
                elif line is not None:
                    self.notes.append("the data of %s was not returned: over the limit for returned images and files" % path)
        returned = 0
        for path in paths:
            relative = os.path.relpath(path, "/tmp")
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                self.notes.append("%s was not returned: not a regular file" % relative)
                continue
            try:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode):
                    self.notes.append("%s was not returned: not a regular file" % relative)
                    continue
                if returned >= caps["files"]:
                    self.notes.append("%d files were written to /tmp/outputs; only the first %d were returned" % (len(paths), caps["files"]))
                    break
                if info.st_size > budget:
                    self.notes.append("%s (%d bytes) was not returned: over the %d-byte limit for returned images and files" % (relative, info.st_size, caps["bytes"]))
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
        # The host stops a run that returns more notes than the cap (only forged records would).
        notes = self.notes
        if len(notes) > caps["notes"]:
            keep = max(0, caps["notes"] - 1)
            notes = notes[:keep] + ["%d more notes were left out" % (len(notes) - keep)][: caps["notes"]]
        return records + [b"note " + json.dumps(note).encode() + b"\n" for note in notes]
