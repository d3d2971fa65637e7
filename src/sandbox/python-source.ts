import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Python programs that run inside sandbox containers (files under `src/sandbox/python/`). */
export type PythonProgram =
  'interpreter_kernel' | 'interpreter_supervisor' | 'run_bootstrap' | 'run_supervisor';

const sources = new Map<PythonProgram, string>();

/**
 * The source of one in-container Python program, read from the package on first use. They are
 * Python files (not strings in TypeScript) so that Python tools and host-side tests read them.
 *
 * @example
 * ```ts
 * const cmd = ['python3', '-I', '-S', '-c', pythonSource('interpreter_supervisor')];
 * ```
 */
export function pythonSource(program: PythonProgram): string {
  let source = sources.get(program);
  if (source === undefined) {
    // A path string, not a URL object: frameworks that bring their own global URL (Next.js's
    // server) make fs refuse URL objects from another realm.
    const here = dirname(fileURLToPath(import.meta.url));
    source = readFileSync(join(here, 'python', `${program}.py`), 'utf8');
    sources.set(program, source);
  }
  return source;
}
