import { readFileSync } from 'node:fs';

/** The Python programs that run inside sandbox containers (files under `src/sandbox/python/`). */
export type PythonProgram = 'interpreter_kernel' | 'interpreter_supervisor';

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
    source = readFileSync(new URL(`./python/${program}.py`, import.meta.url), 'utf8');
    sources.set(program, source);
  }
  return source;
}
