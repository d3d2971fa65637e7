import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { UsageError } from '../errors/usage-error.ts';

/**
 * Runs one of the set-up scripts shipped in the package (`scripts/setup-sandbox.sh`, or
 * `scripts/setup-sandbox-host.sh` for a sandbox host serving other machines over mutual TLS)
 * with the given arguments, as root, and resolves with its exit code.
 *
 * @example
 * ```ts
 * process.exitCode = await runSetupScript({ script: 'setup-sandbox', args: ['--add-packages', 'python3-sklearn'] });
 * ```
 */
export function runSetupScript({
  script,
  args = [],
}: {
  /** Which script. */
  script: 'setup-sandbox' | 'setup-sandbox-host';
  /** Its arguments, passed as they are. */
  args?: readonly string[];
}): Promise<number> {
  if (process.platform !== 'linux') {
    throw new UsageError({
      message:
        `${script} sets up Docker and gVisor on Debian or Ubuntu. On ${process.platform}, run it in a ` +
        'Linux VM with Docker (Colima, Lima, OrbStack, a cloud VM) and point DOCKER_HOST at it.',
    });
  }
  if (process.getuid?.() !== 0) {
    throw new UsageError({
      message: `${script} installs packages and starts dockerd: run it as root, e.g. sudo npx ai-toolbelt ${script}`,
    });
  }
  // Shipped next to dist/ (and next to src/ in the repository).
  const path = fileURLToPath(new URL(`../../scripts/${script}.sh`, import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [path, ...args], { stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}
