// The second Docker engine the fleet tests run against: a dockerd on this machine with its own
// data root, listening on unix:///var/run/docker2.sock and on 127.0.0.1:2376 with mutual TLS,
// made by scripts/setup-sandbox-host.sh. `.ci/run` starts it before the tests; on a developer
// machine the first test file that needs it starts it (root needed). Only
// test/sandbox/fleet-engine2.test.ts kills and restarts it, so nothing else may use it.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import { describe, it } from 'vitest';
import { SANDBOX_IMAGE } from '../sandbox-availability.ts';

export const ENGINE2 = {
  name: 'docker2',
  socket: '/var/run/docker2.sock',
  pidfile: '/var/run/docker2.pid',
  url: 'tcp://127.0.0.1:2376',
  /** The client bundle (ca.pem, cert.pem, key.pem) made by the script. */
  certPath: '/etc/ai-toolbelt/docker2/client',
  /** How the sandbox names the TLS engine by default. */
  tlsName: 'tcp+tls://127.0.0.1:2376',
};

const script = fileURLToPath(new URL('../../../scripts/setup-sandbox-host.sh', import.meta.url));

/** Runs the set-up script for engine 2 (starts it if it is not running; idempotent). */
export function startEngine2(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'bash',
      [script, '--name', ENGINE2.name, '--listen', '127.0.0.1:2376', '--skip-base'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, AI_TOOLBELT_SANDBOX_IMAGE: SANDBOX_IMAGE },
      },
    );
    let output = '';
    child.stdout.on('data', chunk => (output += chunk));
    child.stderr.on('data', chunk => (output += chunk));
    child.on('error', reject);
    child.on('exit', code =>
      code === 0
        ? resolve()
        : reject(new Error(`setup-sandbox-host.sh exited ${code}:\n${output}`)),
    );
  });
}

/** The engine-2 dockerd's PID, or undefined when it is not running. */
export function engine2Pid(): number | undefined {
  try {
    const pid = Number(readFileSync(ENGINE2.pidfile, 'utf8').trim());
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** kill -9 of the engine-2 dockerd (never the main one), returning once it is gone. */
export async function killEngine2(): Promise<void> {
  const pid = engine2Pid();
  if (pid === undefined) throw new Error('engine 2 is not running');
  process.kill(pid, 'SIGKILL');
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise(resolve => setTimeout(resolve, 20));
  }
}

/** A client of engine 2 over its unix socket (for test assertions). */
export const engine2Local = new Docker({ socketPath: ENGINE2.socket });

/** dockerode options for engine 2 over TCP with the client bundle. */
export function engine2TlsOptions(): Docker.DockerOptions {
  const read = (file: string) => readFileSync(`${ENGINE2.certPath}/${file}`);
  return {
    host: '127.0.0.1',
    port: 2376,
    protocol: 'https',
    ca: read('ca.pem'),
    cert: read('cert.pem'),
    key: read('key.pem'),
  };
}

async function prepare(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'not root (engine 2 needs a second dockerd)';
  const answers = () =>
    engine2Local
      .getImage(SANDBOX_IMAGE)
      .inspect()
      .then(
        () => true,
        () => false,
      );
  if (await answers()) return undefined;
  try {
    await startEngine2();
  } catch (error) {
    return (error as Error).message;
  }
  return (await answers()) ? undefined : 'engine 2 started but has no sandbox image';
}

const missing = await prepare();

/**
 * `describe` for tests that need engine 2. Without it: in CI the suite fails; elsewhere it
 * is skipped with one line.
 */
export function describeEngine2(name: string, body: () => void): void {
  if (missing !== undefined) {
    const why = `engine 2 is unavailable: ${missing}; run \`sudo bash scripts/setup-sandbox-host.sh --name docker2 --skip-base\``;
    if (process.env.CI) {
      describe(name, () => {
        it('needs engine 2 (CI must run the fleet suite)', () => {
          throw new Error(`Fleet suite cannot run in CI: ${why}`);
        });
      });
    } else {
      console.log(`[fleet tests skipped] ${name}: ${why}`);
      describe.skip(name, body);
    }
    return;
  }
  describe(name, body);
}
