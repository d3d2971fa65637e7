# Notebook display semantics for the conversation kernel (interpreter_kernel.py), loaded into it as
# `ai_toolbelt_display`: the value of a cell's last expression is shown (not after an assignment or
# a trailing `;`), `display()` shows values in call order, and every shown value becomes a MIME
# bundle from its `_repr_*_` methods, as IPython does. IPython itself is not used: importing it
# costs about a second under gVisor and each cell would pay for its machinery (docs/sandbox.md).
# The code here runs inside the sandbox, next to the model's code: the host checks everything it
# sends again.
import sys

# The MIME types a result may carry, in the order IPython's formatters try them.
REPRS = (
    ("text/html", "_repr_html_"),
    ("text/markdown", "_repr_markdown_"),
    ("image/svg+xml", "_repr_svg_"),
    ("image/png", "_repr_png_"),
    ("image/jpeg", "_repr_jpeg_"),
    ("application/json", "_repr_json_"),
    ("text/latex", "_repr_latex_"),
)
TEXT_TYPES = {"text/html", "text/markdown", "image/svg+xml", "text/latex"}
BINARY_TYPES = {"image/png", "image/jpeg"}


def _cut(text, limit):
    if len(text) <= limit:
        return text
    return text[:limit] + "\n… (%d more characters cut)" % (len(text) - limit)


def _figure_of(obj):
    """The matplotlib figure `obj` is (or draws on, for an Axes), if matplotlib is loaded."""
    figure_module = sys.modules.get("matplotlib.figure")
    if figure_module is None:
        return None
    if isinstance(obj, figure_module.Figure):
        return obj
    return None


def mime_bundle(obj, max_chars, chart_data=None):
    """(data, chart, notes): `obj` as a MIME bundle; `text/plain` always (cut to `max_chars`),
    rich types when the object offers them (dropped, with a note, past `max_chars`: a cut HTML
    table or SVG is worse than none). A matplotlib figure gives its PNG and its chart data."""
    import base64, json
    data, notes, chart, bundle = {}, [], None, {}
    figure = _figure_of(obj)
    if figure is not None:
        import io
        buffer = io.BytesIO()
        try:
            if chart_data is not None:
                chart = chart_data(figure)
            figure.savefig(buffer, format="png", bbox_inches="tight")
            data["image/png"] = base64.b64encode(buffer.getvalue()).decode("ascii")
        except Exception as error:
            notes.append("a figure could not be shown: %s" % error)
        # Shown now: not returned again as a figure left open at the end of the cell.
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            pyplot.close(figure)
    elif not isinstance(obj, type):  # a class's _repr_html_ is an unbound function
        method = getattr(obj, "_repr_mimebundle_", None)
        if callable(method):
            try:
                found = method()
                bundle = dict(found[0] if isinstance(found, tuple) else found or {})
            except Exception:
                bundle = {}
        for mime, name in REPRS:
            if mime in bundle:
                continue
            method = getattr(obj, name, None)
            if not callable(method):
                continue
            try:
                value = method()
            except Exception:
                continue
            if value is not None:
                bundle[mime] = value[0] if isinstance(value, tuple) else value
        for mime, value in bundle.items():
            if mime in BINARY_TYPES:
                value = base64.b64encode(value).decode("ascii") if isinstance(value, bytes) else value
            elif mime == "application/json":
                try:
                    value = json.loads(json.dumps(value, allow_nan=False))
                except (TypeError, ValueError):
                    continue
                except RecursionError:
                    # Deeper than Python's recursion limit: the cell itself still succeeds.
                    notes.append("a %s result was left out: nested too deep" % mime)
                    continue
                if len(json.dumps(value)) > max_chars:
                    notes.append("a %s result was left out: over %d characters" % (mime, max_chars))
                    continue
                data[mime] = value
                continue
            elif mime not in TEXT_TYPES:
                continue
            if not isinstance(value, str):
                continue
            if len(value) > max_chars and mime not in BINARY_TYPES:
                notes.append("a %s result was left out: over %d characters" % (mime, max_chars))
                continue
            data[mime] = value
    text = bundle.get("text/plain") if figure is None and not isinstance(obj, type) else None
    if not isinstance(text, str):
        try:
            text = repr(obj)
        except Exception as error:
            text = "<%s object: repr() failed: %s>" % (type(obj).__name__, error)
    data["text/plain"] = _cut(text, max_chars)
    return data, chart, notes


def is_silenced(source):
    """True when the cell's last token is `;` (comments and blank lines aside): nothing is shown."""
    import io, tokenize
    last = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
                last = token
    except (tokenize.TokenError, SyntaxError):
        return False
    return last is not None and last.type == tokenize.OP and last.string == ";"


def run_cell(source, namespace, filename, show, running):
    """Runs `source` as a notebook cell in `namespace`: its exit status, as `run_code` gives it.

    All statements run as a script; the value of a last expression statement goes to `show`
    (and `_`) unless it is None or the cell ends with `;`. `%pip ...` and `!pip ...` lines run
    pip (`parse_code` in artifacts.py). `running(True)` marks the window in which an interrupt
    may stop the code (see interpreter_kernel.py)."""
    import ast
    from ai_toolbelt_artifacts import parse_code, run_code
    try:
        tree = parse_code(source, filename)
    except (SyntaxError, ValueError):
        tree = None
    if tree is None:
        # Prints the error as Python would (outside the except: no "during handling" context).
        return run_code(source, namespace, filename)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not is_silenced(source):
        last = ast.Expression(body=tree.body.pop().value)
    body = compile(tree, filename, "exec")
    expression = compile(last, filename, "eval") if last is not None else None

    def cell():
        exec(body, namespace)
        if expression is not None:
            value = eval(expression, namespace)
            if value is not None:
                namespace["_"] = value
                show(value, True)

    running(True)
    try:
        return run_code(cell, namespace, filename, source=source)
    finally:
        running(False)


def install(show):
    """Makes `display()` a builtin (no import needed) and, where IPython is not installed,
    `from IPython.display import display, HTML, Markdown, ...` work as in a notebook."""
    import builtins, types

    def display(*objs, **_options):
        for obj in objs:
            show(obj, False)

    builtins.display = display
    import importlib.util
    if importlib.util.find_spec("IPython") is not None:
        return  # a real IPython keeps its own

    class _Shown:
        mime = "text/plain"

        def __init__(self, data=None, filename=None, **_options):
            if data is None and filename is not None:
                with open(filename, "rb") as handle:
                    data = handle.read()
                if self.mime != "image/png":
                    data = data.decode("utf-8", "replace")
            self.data = data

        def __repr__(self):
            return "<%s object>" % type(self).__name__

    def _kind(name, mime, method):
        return type(name, (_Shown,), {method: lambda self: self.data, "mime": mime})

    package = types.ModuleType("IPython")
    module = types.ModuleType("IPython.display")
    module.display = display
    module.HTML = _kind("HTML", "text/html", "_repr_html_")
    module.Markdown = _kind("Markdown", "text/markdown", "_repr_markdown_")
    module.SVG = _kind("SVG", "image/svg+xml", "_repr_svg_")
    module.JSON = _kind("JSON", "application/json", "_repr_json_")
    module.Image = _kind("Image", "image/png", "_repr_png_")
    module.clear_output = lambda *args, **kwargs: None
    package.display = module
    # No shell: libraries that find IPython loaded (matplotlib, pandas, tqdm) ask for one.
    package.get_ipython = lambda: None
    package.__path__ = []
    modules = {"IPython": package, "IPython.display": module}

    class Loader:
        def create_module(self, spec):
            return modules[spec.name]

        def exec_module(self, module):
            pass

    class Finder:
        # Found only when the code imports it: nothing else sees an IPython that is not there.
        def find_spec(self, name, path=None, target=None):
            if name in modules:
                return importlib.util.spec_from_loader(name, Loader())
            return None

    sys.meta_path.append(Finder())
