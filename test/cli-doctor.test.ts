import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import type { DoctorCheck } from '../src/cli/doctor.ts';
import { describeSandbox } from './sandbox/sandbox-availability.ts';

const run = promisify(execFile);
const cli = join(import.meta.dirname, '..', 'src', 'cli.ts');

async function doctor(
  env: Record<string, string> = {},
): Promise<{ code: number; checks: DoctorCheck[] }> {
  try {
    const { stdout } = await run(process.execPath, [cli, 'doctor', '--json'], {
      env: { ...process.env, ...env },
    });
    return { code: 0, checks: JSON.parse(stdout) };
  } catch (error) {
    const { code, stdout } = error as { code: number; stdout: string };
    return { code, checks: JSON.parse(stdout) };
  }
}

describeSandbox('ai-toolbelt doctor and setup-sandbox', () => {
  it('passes every check on a machine set up by setup-sandbox, with one real run', async () => {
    const { code, checks } = await doctor();
    expect(checks.map(check => [check.name, check.ok])).toEqual([
      ['Node.js', true],
      ['Docker engine', true],
      ['gVisor runtime', true],
      ['sandbox image', true],
      ['run under gVisor', true],
    ]);
    expect(checks.at(-1)!.detail).toMatch(/^Python 3\.\d+\.\d+ in \d+ ms$/);
    expect(code).toBe(0);
  }, 120_000);

  it('says what to fix when the engine does not answer, and exits 1', async () => {
    const { code, checks } = await doctor({ DOCKER_HOST: 'unix:///nonexistent/docker.sock' });
    expect(code).toBe(1);
    const failed = checks.find(check => !check.ok)!;
    expect(failed.name).toBe('Docker engine');
    expect(failed.detail).toContain('/nonexistent/docker.sock');
    expect(failed.fix).toContain('npx ai-toolbelt setup-sandbox');
  });

  it('passes setup-sandbox arguments to the shipped script', async () => {
    const error = await run(process.execPath, [cli, 'setup-sandbox', '--no-such-flag']).catch(
      (e: unknown) => e as { code: number; stderr: string },
    );
    expect(error).toMatchObject({ code: 2 });
    expect((error as { stderr: string }).stderr).toContain('unknown argument --no-such-flag');
  });
});
