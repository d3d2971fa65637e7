import type { PythonRunResult, PythonSandbox } from '../../src/python/python-sandbox.ts';

/**
 * A sandbox stand-in for pure policy tests only (the integration tests use the
 * real Docker + gVisor sandbox): answers by code, records what it ran.
 */
export function fakeSandbox(
  answer: (code: string) => Partial<PythonRunResult>,
): PythonSandbox & { ran: string[] } {
  const ran: string[] = [];
  return {
    ran,
    async execute(code) {
      ran.push(code);
      const out = answer(code);
      return {
        status: 'success',
        exitCode: 0,
        stdout: '',
        stderr: '',
        truncated: false,
        durationMs: 1,
        images: [],
        files: [],
        notes: [],
        ...out,
      };
    },
  };
}

/** A Python traceback as CPython prints it for code run from stdin. */
export function traceback(line: number, exception: string): string {
  return `Traceback (most recent call last):\n  File "<stdin>", line ${line}, in <module>\n${exception}\n`;
}
