import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { egressRuntimeCheck, pipCheck } from '../src/cli/doctor-egress.ts';
import type { DoctorCheck } from '../src/cli/doctor.ts';
import { describeSandbox } from './sandbox/sandbox-availability.ts';

const run = promisify(execFile);
const cli = join(import.meta.dirname, '..', 'src', 'cli.ts');

async function doctor(
  env: Record<string, string> = {},
  flags: string[] = [],
): Promise<{ code: number; checks: DoctorCheck[] }> {
  try {
    const { stdout } = await run(process.execPath, [cli, 'doctor', '--json', ...flags], {
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
      ['egress runtime', true],
      ['sandbox image', true],
      ['run under gVisor', true],
      ['pip in the image', true],
    ]);
    const detail = (name: string) => checks.find(check => check.name === name)!.detail;
    expect(detail('run under gVisor')).toMatch(/^Python 3\.\d+\.\d+ in \d+ ms$/);
    expect(code).toBe(0);
  }, 120_000);

  it('with --egress, finds runsc-egress with both arguments and pip in the image, and runs through the proxy', async () => {
    const { code, checks } = await doctor({}, ['--egress']);
    expect(checks.filter(check => !check.ok)).toEqual([]);
    const detail = (name: string) => checks.find(check => check.name === name)!.detail;
    expect(detail('egress runtime')).toMatch(
      /^runsc-egress \(\S*runsc --network=none --host-uds=open\)$/,
    );
    expect(detail('pip in the image')).toMatch(/^pip \d+\.\d+/);
    expect(detail('egress proxy')).toMatch(
      /^reached an allowed host and was refused one that resolves to loopback \(\d+ ms\)$/,
    );
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

describe('doctor: the egress runtime and pip', () => {
  const fix = 'sudo npx ai-toolbelt setup-sandbox';
  const runsc = '/usr/bin/runsc';
  const base = { runc: { path: 'runc' }, runsc: { path: runsc, runtimeArgs: ['--network=none'] } };

  it('is ok when runsc-egress has --network=none and --host-uds=open', () => {
    const runtimes = {
      ...base,
      'runsc-egress': { path: runsc, runtimeArgs: ['--network=none', '--host-uds=open'] },
    };
    for (const egress of [true, false]) {
      expect(egressRuntimeCheck({ runtimes, egress, fix })).toEqual({
        name: 'egress runtime',
        ok: true,
        detail: 'runsc-egress (/usr/bin/runsc --network=none --host-uds=open)',
      });
    }
  });

  it('fails a missing runsc-egress only when egress is asked about', () => {
    expect(egressRuntimeCheck({ runtimes: base, egress: true, fix })).toMatchObject({
      ok: false,
      detail: expect.stringContaining('runsc-egress is not set up'),
      fix,
    });
    const quiet = egressRuntimeCheck({ runtimes: base, egress: false, fix });
    expect(quiet).toMatchObject({ ok: true, detail: expect.stringContaining('only needed for') });
    expect(quiet.detail).toContain('not set up');
    expect(quiet.fix).toBeUndefined();
  });

  it('fails runsc-egress without --host-uds=open only when egress is asked about', () => {
    const runtimes = { ...base, 'runsc-egress': { path: runsc, runtimeArgs: ['--network=none'] } };
    expect(egressRuntimeCheck({ runtimes, egress: true, fix })).toMatchObject({
      ok: false,
      detail: expect.stringContaining('lacks --host-uds=open'),
      fix,
    });
    expect(egressRuntimeCheck({ runtimes, egress: false, fix })).toMatchObject({ ok: true });
  });

  it('always fails a runsc-egress that would give containers a network or no gVisor', () => {
    const networked = {
      ...base,
      'runsc-egress': { path: runsc, runtimeArgs: ['--host-uds=open'] },
    };
    const noArgs = { ...base, 'runsc-egress': { path: runsc } };
    const runc = {
      ...base,
      'runsc-egress': { path: 'runc', runtimeArgs: ['--network=none', '--host-uds=open'] },
    };
    for (const egress of [true, false]) {
      for (const runtimes of [networked, noArgs]) {
        expect(egressRuntimeCheck({ runtimes, egress, fix })).toMatchObject({
          ok: false,
          detail: expect.stringContaining('lacks --network=none'),
          fix,
        });
      }
      expect(egressRuntimeCheck({ runtimes: runc, egress, fix })).toMatchObject({
        ok: false,
        detail: expect.stringContaining('not gVisor'),
      });
    }
  });

  it('fails an image without pip only when egress is asked about', () => {
    expect(pipCheck({ version: '23.0.1', egress: true, fix })).toEqual({
      name: 'pip in the image',
      ok: true,
      detail: 'pip 23.0.1',
    });
    expect(pipCheck({ version: undefined, egress: true, fix })).toMatchObject({ ok: false, fix });
    expect(pipCheck({ version: undefined, egress: false, fix })).toMatchObject({
      ok: true,
      detail: expect.stringContaining('only needed for'),
    });
  });
});
