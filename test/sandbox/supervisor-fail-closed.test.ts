import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exitStatus } from '../../src/sandbox/run/run-in-container.ts';
import { SUPERVISOR_UNSAFE_EXIT } from '../../src/sandbox/in-container/bootstrap.ts';
import { pythonSource } from '../../src/sandbox/in-container/python-source.ts';

const SUPERVISOR_SOURCE = pythonSource('run_supervisor');
const BOOTSTRAP_SOURCE = pythonSource('run_bootstrap');

const dirs: string[] = [];
afterAll(() => dirs.forEach(dir => rmSync(dir, { recursive: true, force: true })));

/**
 * Runs the real supervisor source with the host's python3, as the container runs it (minus
 * `-I`, so that PYTHONPATH can put `ctypes` in front of the real one), with stdin closed.
 */
function superviseWith(ctypes: string | undefined) {
  const dir = mkdtempSync(join(tmpdir(), 'ai-toolbelt-ctypes-'));
  dirs.push(dir);
  if (ctypes !== undefined) {
    mkdirSync(join(dir, 'ctypes'));
    writeFileSync(join(dir, 'ctypes', '__init__.py'), ctypes);
  }
  const run = spawnSync('python3', ['-S', '-c', SUPERVISOR_SOURCE, BOOTSTRAP_SOURCE, ''], {
    env: { PATH: process.env.PATH, PYTHONPATH: dir },
    input: '',
    timeout: 20_000,
  });
  if (run.error) throw run.error;
  return { status: run.status, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

/** A `ctypes` whose libc answers `prctl` with `answers(option)`, errno EPERM. */
const fakeLibc = (answers: string) =>
  [
    'def get_errno():',
    '    return 1',
    'class CDLL:',
    '    def __init__(self, name, use_errno=False):',
    '        pass',
    '    def prctl(self, option, *args):',
    `        return (${answers})(option)`,
  ].join('\n');

const REFUSAL =
  /^ai-toolbelt sandbox: the supervisor could not make itself non-dumpable \((.+)\); no code was run\n$/;

describe('the supervisor fails closed without PR_SET_DUMPABLE', () => {
  it('refuses to start the bootstrap when prctl fails', () => {
    const run = superviseWith(fakeLibc('lambda option: -1'));
    expect(run.status).toBe(SUPERVISOR_UNSAFE_EXIT);
    expect(run.stderr).toMatch(REFUSAL);
    expect(run.stderr).toContain('(PermissionError: [Errno 1] prctl(PR_SET_DUMPABLE, 0) failed)');
    // The bootstrap never ran: no ready marker, nothing on stdout.
    expect(run.stdout).toBe('');
  });

  it('refuses when prctl claims success but the process is still dumpable', () => {
    const run = superviseWith(fakeLibc('lambda option: 1 if option == 3 else 0'));
    expect(run.status).toBe(SUPERVISOR_UNSAFE_EXIT);
    expect(run.stderr).toMatch(REFUSAL);
  });

  it('refuses when ctypes is missing', () => {
    const run = superviseWith('raise ImportError("No module named ctypes (test)")');
    expect(run.status).toBe(SUPERVISOR_UNSAFE_EXIT);
    expect(run.stderr).toMatch(REFUSAL);
    expect(run.stderr).toContain('(ImportError: No module named ctypes (test))');
  });

  it('goes on with the real ctypes (then stops at the closed stdin, before any code)', () => {
    const run = superviseWith(undefined);
    expect(run.stderr).not.toMatch(/non-dumpable/);
    expect(run.status).toBe(70);
  });

  it('reports the refusal, without a done marker, as crashed', () => {
    const refused = { exitCode: SUPERVISOR_UNSAFE_EXIT, oomKilled: false };
    expect(exitStatus({ ...refused, printed: true })).toBe('crashed');
    expect(exitStatus({ ...refused, printed: false })).toBe('crashed');
    expect(exitStatus({ exitCode: 1, oomKilled: false, printed: true })).toBe('error');
  });
});
