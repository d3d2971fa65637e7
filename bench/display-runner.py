# The kernel's notebook runner (src/sandbox/in-container/display.py) against IPython's own
# machinery, on the host (no gVisor; needs IPython importable): per-cell cost over the same 1,000
# cells (4 sources, 250 times: assignments, a shown value, a print), and what importing IPython
# and creating its shell costs once. Prints the row as one JSON line and writes it, with the
# machine's facts, to bench/results/display-runner.json; issue 35 chose the runner by it.
#   npm run bench:display-runner   (python3 bench/display-runner.py, then the docs' figures)
import contextlib, datetime, io, json, os, platform, sys, time, types

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = os.path.join(HERE, "..", "src", "sandbox", "in-container")
for name in ("artifacts", "display"):
    module = types.ModuleType("ai_toolbelt_" + name)
    sys.modules["ai_toolbelt_" + name] = module
    with open(os.path.join(SOURCES, name + ".py")) as source:
        exec(compile(source.read(), name, "exec"), module.__dict__)
display = sys.modules["ai_toolbelt_display"]

LOAD_START = os.getloadavg()[0]
CELLS = ["x = 1", "x + 1", "y = [i for i in range(100)]\nlen(y)", "print('a')"] * 250
namespace = {"__builtins__": __builtins__}


def show(value, main):
    display.mime_bundle(value, 20000)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return " ".join(line.split(":", 1)[1].split()[:2])
    except OSError:
        pass
    return platform.processor() or "unknown"


start = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    for cell in CELLS:
        display.run_cell(cell, namespace, "<cell>", show, lambda flag: None)
runner_ms = (time.perf_counter() - start) * 1000 / len(CELLS)

start = time.perf_counter()
from IPython import __version__ as ipython_version  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
shell = InteractiveShell.instance()
import_ms = (time.perf_counter() - start) * 1000
start = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    for cell in CELLS:
        shell.run_cell(cell, store_history=False)
ipython_ms = (time.perf_counter() - start) * 1000 / len(CELLS)

row = {
    "bench": "display-runner",
    "python": platform.python_version(),
    "ipython": ipython_version,
    "cells": len(CELLS),
    "runnerCellMs": round(runner_ms, 3),
    "ipythonCellMs": round(ipython_ms, 3),
    "ipythonImportAndShellMs": round(import_ms, 1),
}
print(json.dumps(row))
load_end = os.getloadavg()[0]
results = {
    "name": "display-runner",
    "command": "npm run bench:display-runner",
    "args": [],
    "machine": {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "cores": os.cpu_count(),
        "cpu": cpu_name(),
        "memoryGiB": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30),
        "python": platform.python_version(),
        "loadAverage": {"start": LOAD_START, "end": load_end, "max": max(LOAD_START, load_end)},
    },
    "notes": ["on the host, not in the sandbox: IPython is not in the image"],
    "rows": [row],
}
with open(os.path.join(HERE, "results", "display-runner.json"), "w") as out:
    json.dump(results, out, indent=2)
    out.write("\n")
