// in-container/: the Python programs that run inside each container (.py files, copied to dist/ on
// build) and their start.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Python programs that run inside sandbox containers (files under `src/sandbox/in-container/`). */
export type PythonProgram =
  | 'egress_forwarder'
  | 'interpreter_kernel'
  | 'interpreter_supervisor'
  | 'run_bootstrap'
  | 'run_supervisor';

/** The shared modules each program imports (`artifacts.py` as `ai_toolbelt_artifacts`, ...), in load order. */
const MODULES: Partial<Record<PythonProgram, readonly string[]>> = {
  run_supervisor: ['egress'],
  interpreter_supervisor: ['egress'],
  run_bootstrap: ['artifacts'],
  interpreter_kernel: ['artifacts', 'charts', 'display'],
};

const sources = new Map<PythonProgram, string>();

/**
 * The source of one in-container Python program, read from the package on first use. They are
 * Python files (not strings in TypeScript) so that Python tools and host-side tests read them.
 * A program is run as `python3 -c SOURCE`, so the shared modules it imports
 * (`ai_toolbelt_artifacts` from `artifacts.py`, `ai_toolbelt_display`, `ai_toolbelt_charts`,
 * `ai_toolbelt_egress` in the supervisors) are put in front of it, installed in `sys.modules`
 * before the program's first line.
 *
 * @example
 * ```ts
 * const cmd = ['python3', '-I', '-S', '-c', pythonSource('interpreter_supervisor')];
 * ```
 */
export function pythonSource(program: PythonProgram): string {
  let source = sources.get(program);
  if (source === undefined) {
    source = read(program);
    const modules = MODULES[program] ?? [];
    if (modules.length > 0) {
      const loads = modules.map(name => {
        // A JSON string is a valid Python string literal.
        const text = JSON.stringify(read(name));
        return (
          `_module = _types.ModuleType("ai_toolbelt_${name}")\n` +
          `_sys.modules["ai_toolbelt_${name}"] = _module\n` +
          `exec(compile(${text}, "ai_toolbelt_${name}", "exec"), _module.__dict__)\n`
        );
      });
      source = `import sys as _sys, types as _types\n${loads.join('')}del _sys, _types, _module\n${source}`;
    }
    sources.set(program, source);
  }
  return source;
}

function read(name: string): string {
  // A path string, not a URL object: frameworks that bring their own global URL (Next.js's
  // server) make fs refuse URL objects from another realm.
  const here = dirname(fileURLToPath(import.meta.url));
  return readFileSync(join(here, `${name}.py`), 'utf8');
}
