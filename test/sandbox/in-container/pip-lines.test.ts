// Notebook pip lines (`%pip install x`, `!pip install x`) in cells and one-shot code, checked on
// the host's python3 without Docker: display.py and artifacts.py are loaded as the kernel loads
// them, and a stand-in `pip` package (first on PYTHONPATH) says what it was asked and fails on
// request, so no real pip or network is involved.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const dir = join(import.meta.dirname, '..', '..', '..', 'src', 'sandbox', 'in-container');

// Runs each cell (JSON list on stdin) with run_cell (or run_code for `oneShot`), its fds 1 and 2
// captured, and prints one JSON result per cell.
const DRIVER = String.raw`
import json, os, sys, tempfile, types
here = sys.argv[1]
for name in ("artifacts", "charts", "display"):
    module = types.ModuleType("ai_toolbelt_" + name)
    sys.modules[module.__name__] = module
    with open(os.path.join(here, name + ".py")) as handle:
        exec(compile(handle.read(), module.__name__, "exec"), module.__dict__)
from ai_toolbelt_artifacts import run_code
from ai_toolbelt_display import run_cell
namespace = {"__builtins__": __builtins__}
results = []
for cell in json.load(sys.stdin):
    shown = []
    saved = [os.dup(1), os.dup(2)]
    files = [tempfile.TemporaryFile(), tempfile.TemporaryFile()]
    os.dup2(files[0].fileno(), 1)
    os.dup2(files[1].fileno(), 2)
    try:
        if cell.get("oneShot"):
            status = run_code(cell["code"], namespace, "<sandbox>")
        else:
            status = run_cell(cell["code"], namespace, "<cell>", lambda value, main: shown.append(repr(value)), lambda running: None)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
    out = []
    for handle in files:
        handle.seek(0)
        out.append(handle.read().decode())
    results.append({"status": status, "stdout": out[0], "stderr": out[1], "shown": shown})
print(json.dumps(results))
`;

// The stand-in pip: prints its arguments; `fail` makes it exit 3; `make NAME` writes NAME.py
// into the directory PIP_TARGET names (on sys.path), as an install would.
const FAKE_PIP = String.raw`
import os, sys
args = sys.argv[1:]
print("PIP %r" % (args,))
sys.stderr.write("pip says hi\n")
if "make" in args:
    name = args[args.index("make") + 1]
    with open(os.path.join(os.environ["PIP_TARGET"], name + ".py"), "w") as handle:
        handle.write("VALUE = 42\n")
sys.exit(3 if "fail" in args else 0)
`;

type CellResult = { status: number; stdout: string; stderr: string; shown: string[] };

describe('notebook pip lines (display.py, artifacts.py on the host python3)', () => {
  let root: string;
  let run: (
    cells: Array<{ code: string; oneShot?: boolean }>,
    env?: Record<string, string | undefined>,
  ) => CellResult[];

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'atb-pip-lines-'));
    mkdirSync(join(root, 'fake', 'pip'), { recursive: true });
    writeFileSync(join(root, 'fake', 'pip', '__init__.py'), '');
    writeFileSync(join(root, 'fake', 'pip', '__main__.py'), FAKE_PIP);
    mkdirSync(join(root, 'installed'));
    run = (cells, env = {}) =>
      JSON.parse(
        execFileSync('python3', ['-c', DRIVER, dir], {
          input: JSON.stringify(cells),
          env: {
            ...process.env,
            PYTHONPATH: `${join(root, 'fake')}:${join(root, 'installed')}`,
            PIP_TARGET: join(root, 'installed'),
            PYTHONDONTWRITEBYTECODE: '1',
            // pip lines run only where the host gave the container an egress policy.
            AI_TOOLBELT_EGRESS_SOCKET: '/run/ai-toolbelt-egress/proxy.sock',
            ...env,
          },
          cwd: root,
        }).toString(),
      );
  });

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('runs `%pip` and `!pip` lines as `python -m pip ARGS`, in order with the cell output', () => {
    const [cell] = run([
      {
        code: 'print("before")\n%pip install "a b" c==1.0  # why\nprint("middle")\n  \n!pip list\nprint("after")',
      },
    ]);
    expect(cell).toEqual({
      status: 0,
      stdout: "before\nPIP ['install', 'a b', 'c==1.0']\nmiddle\nPIP ['list']\nafter\n",
      stderr: 'pip says hi\npip says hi\n',
      shown: [],
    });
  });

  it('takes indented pip lines in blocks; the last expression is still shown', () => {
    const [cell] = run([{ code: 'for i in range(2):\n    %pip show x\n40 + 2' }]);
    expect(cell!.status).toBe(0);
    expect(cell!.stdout).toBe("PIP ['show', 'x']\nPIP ['show', 'x']\n");
    expect(cell!.shown).toEqual(['42']);
  });

  it('without an egress policy, a pip line fails at once and says why', () => {
    const [cell] = run([{ code: '%pip install x' }], { AI_TOOLBELT_EGRESS_SOCKET: '' });
    expect(cell!.status).toBe(1);
    expect(cell!.stdout).toBe('');
    expect(cell!.stderr).toContain(
      'RuntimeError: pip cannot install anything here: this sandbox has no network and no package index',
    );
  });

  it('a failing pip makes the cell an error that points at its line', () => {
    const [cell] = run([{ code: 'x = 1\n%pip install fail\nprint("not reached")' }]);
    expect(cell!.status).toBe(1);
    expect(cell!.stdout).toBe("PIP ['install', 'fail']\n");
    expect(cell!.stderr).toContain('File "<cell>", line 2, in <module>\n    %pip install fail\n');
    expect(cell!.stderr).toMatch(/RuntimeError: pip exited with status 3\n$/);
  });

  it('leaves lines inside string literals, and other `!` commands, alone', () => {
    const [text, bang] = run([
      { code: 's = """\n%pip install x\n!pip list\n"""\nprint(repr(s))' },
      { code: '%pip list\n!ls -l' },
    ]);
    expect(text).toMatchObject({ status: 0, stdout: "'\\n%pip install x\\n!pip list\\n'\n" });
    // A syntax error: nothing runs, not even the pip line before it.
    expect(bang!.status).toBe(1);
    expect(bang!.stdout).toBe('');
    expect(bang!.stderr).toMatch(/^ {2}File "<cell>", line 2\n {4}!ls -l\n[\s\S]*SyntaxError/);
    expect(bang!.stderr).not.toContain('Traceback');
    expect(bang!.stderr).not.toContain('During handling');
  });

  it('keeps the line numbers and text of a syntax error elsewhere in the cell', () => {
    const [after, on] = run([
      { code: '%pip install x\n\ndef f(:\n    pass' },
      { code: 'x = (1,\n%pip install x\n)' },
    ]);
    expect(after!.stderr).toMatch(/^ {2}File "<cell>", line 3\n {4}def f\(:\n/);
    expect(after!.stdout).toBe('');
    expect(on!.stderr).toMatch(/^ {2}File "<cell>", line 2\n {4}%pip install x\n/);
  });

  it('clears the import caches: a module pip puts on sys.path imports on the next line', () => {
    const [cell] = run([
      {
        code: 'try:\n    import fresh_module\nexcept ImportError:\n    pass\n%pip install make fresh_module\nimport fresh_module\nfresh_module.VALUE',
      },
    ]);
    expect(cell!.stderr).toBe('pip says hi\n');
    expect(cell!.shown).toEqual(['42']);
  });

  it('works in one-shot code too (run_code)', () => {
    const [cell, wrong] = run([
      { code: 'print(1)\n!pip freeze\nprint(2)', oneShot: true },
      { code: '!pip freeze\nprint(', oneShot: true },
    ]);
    expect(cell).toMatchObject({ status: 0, stdout: "1\nPIP ['freeze']\n2\n" });
    expect(wrong!.status).toBe(1);
    expect(wrong!.stderr).toMatch(/^ {2}File "<sandbox>", line 2\n {4}print\(\n[\s\S]*SyntaxError/);
  });
});
