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
            exec(compile(parse_code(code, filename), filename, "exec"), namespace)
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
        if first is None and not isinstance(error, SyntaxError):
            first = error.__traceback__.tb_next
        # A SyntaxError without a frame of the code's is the code's own: printed without frames.
        traceback.print_exception(type(error), error, first)
        return 1


# A notebook pip line: `%pip ARGS` or `!pip ARGS` (or pip3) alone on its line, indented or not.
_PIP_LINE = r"([ \t]*)[%!]pip3?(?![\w.-])[ \t]*(.*)"
# The placeholder call a pip line becomes while the code is parsed.
_PIP_CALL = "__ai_toolbelt_pip__"


def parse_code(source, filename):
    """The module AST of `source` (text), where each notebook pip line that stands as a statement
    (`%pip install x` or `!pip install x`, at any indentation; not a line inside a string
    literal or an expression) is a call of `pip("install x")`, as in a notebook. Raises the
    SyntaxError compiling `source` raises, at the user's own line numbers and text.

    The lines are found before parsing and replaced by a placeholder call of the same line;
    one the parsed tree does not hold as a statement of its own goes back to the user's text.
    """
    import ast, re
    lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", source)
    found = {}  # line index: (indentation, pip's arguments)
    for index, line in enumerate(lines):
        match = re.fullmatch(_PIP_LINE, line.rstrip("\r\n"))
        if match is not None:
            found[index] = match.groups()
    if not found:
        return ast.parse(source, filename, "exec")

    def rewritten():
        text = list(lines)
        for index, (indent, _args) in found.items():
            ending = lines[index][len(lines[index].rstrip("\r\n")):]
            text[index] = "%s%s(%d)%s" % (indent, _PIP_CALL, index, ending)
        return "".join(text)

    while found:
        try:
            tree, failure = ast.parse(rewritten(), filename, "exec"), None
        except SyntaxError as error:
            tree, failure = None, error
        if failure is not None:
            try:
                # Every candidate was text in a string (a `\`-continued one), or the code is wrong.
                return ast.parse(source, filename, "exec")
            except SyntaxError:
                pass
            index = (failure.lineno or 0) - 1
            if index in found:
                failure.text = lines[index]
                failure.offset = len(found[index][0]) + 1
                if hasattr(failure, "end_offset"):
                    failure.end_offset = None
            failure.__context__ = None
            raise failure
        statements = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                call = node.value
                if isinstance(call.func, ast.Name) and call.func.id == _PIP_CALL and len(call.args) == 1:
                    index = getattr(call.args[0], "value", None)
                    if index in found and node.lineno == index + 1 and node.col_offset == len(found[index][0]):
                        statements[index] = node
        if len(statements) == len(found):
            for index, node in statements.items():
                # __import__("ai_toolbelt_artifacts").pip(ARGS): no name in the code's namespace.
                loader = ast.Call(func=ast.Name(id="__import__", ctx=ast.Load()), args=[ast.Constant(value="ai_toolbelt_artifacts")], keywords=[])
                function = ast.Attribute(value=loader, attr="pip", ctx=ast.Load())
                node.value = ast.Call(func=function, args=[ast.Constant(value=found[index][1])], keywords=[])
                # The whole line, as the user wrote it (a traceback then points at no part of it).
                end = len(lines[index].rstrip("\r\n").encode("utf-8"))
                for part in ast.walk(node):
                    part.lineno = part.end_lineno = index + 1
                    part.col_offset, part.end_col_offset = len(found[index][0]), end
            return tree
        found = {index: found[index] for index in statements}
    return ast.parse(source, filename, "exec")


def pip(arguments):
    """Runs a notebook pip line: `python -m pip ARGUMENTS` (split as a shell would, `#` starting a
    comment), its output on the code's stdout and stderr; then clears the import system's caches
    so the packages it installed import. A failure raises RuntimeError."""
    import importlib, shlex, subprocess
    if not os.environ.get("AI_TOOLBELT_EGRESS_SOCKET"):
        # pip would only fail later and less clearly (PEP 668, then no network).
        raise RuntimeError(
            "pip cannot install anything here: this sandbox has no network and no package index; "
            "use the packages already installed"
        )
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    status = subprocess.call([sys.executable, "-m", "pip"] + shlex.split(arguments, comments=True))
    importlib.invalidate_caches()
    if status != 0:
        raise RuntimeError("pip exited with status %d" % status)


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
