import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import { afterAll, describe, expect, it } from 'vitest';

// scripts/setup-sandbox.sh against a scratch engine of its own (never the host's engine, which
// other tests use): started, killed with -9, and brought back by one more run of the script.
const NAME = 'aitb-setup-test';
const script = fileURLToPath(new URL('../../scripts/setup-sandbox.sh', import.meta.url));
const engine = new Docker({ socketPath: `/var/run/${NAME}.sock` });

function setup(...args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script, '--name', NAME, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', chunk => (output += chunk));
    child.stderr.on('data', chunk => (output += chunk));
    child.on('error', reject);
    child.on('exit', code => resolve({ code, output }));
  });
}

const dockerdPid = () => Number(readFileSync(`/var/run/${NAME}.pid`, 'utf8').trim());

const root = process.getuid?.() === 0;
if (!root && !process.env.CI) console.log('[setup script test skipped] needs root');

describe.skipIf(!root && !process.env.CI)('scripts/setup-sandbox.sh', () => {
  afterAll(async () => {
    if (root) await setup('--stop');
  }, 60_000);

  it('brings a dockerd killed with -9 back in one run', async () => {
    expect(process.getuid?.(), 'the set-up script needs root').toBe(0);
    const first = await setup('--engine-only');
    expect(first.code, first.output).toBe(0);
    const killed = dockerdPid();
    process.kill(killed, 'SIGKILL');
    // Right away, as CI or an operator would: the old process may still be dying or a zombie.
    const again = await setup('--engine-only');
    expect(again.code, again.output).toBe(0);
    expect(again.output).toContain('starting dockerd');
    expect(dockerdPid()).not.toBe(killed);
    const info = (await engine.info()) as { Runtimes?: Record<string, unknown> };
    expect(Object.keys(info.Runtimes ?? {})).toContain('runsc');
  }, 180_000);
});
