import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

/** A started example server. */
export type AppProcess = {
  /** The match of `readyPattern` in the output. */
  ready: RegExpMatchArray;
  /** Everything it printed so far (stdout and stderr). */
  output: () => string;
  /** SIGTERM, then SIGKILL after `killAfterMs`; resolves once it exited. */
  stop: (killAfterMs?: number) => Promise<void>;
  child: ChildProcess;
};

/**
 * Starts a process and resolves when its output matches `readyPattern`; rejects
 * with its output if it exits or takes longer than `timeoutMs`.
 *
 * @example
 * const app = await startAppProcess({ command: process.execPath, args: ['main.ts'], readyPattern: /Listening on (\S+)/ });
 * await app.stop();
 */
export async function startAppProcess({
  command,
  args = [],
  cwd,
  env = {},
  readyPattern,
  timeoutMs = 60_000,
}: {
  /** Executable. */
  command: string;
  /** Its arguments. */
  args?: string[];
  /** Working directory. */
  cwd?: string;
  /** Added to this process's environment. */
  env?: Record<string, string>;
  /** Output that means "ready"; capture groups end up in `ready`. */
  readyPattern: RegExp;
  /** Longest wait for it. */
  timeoutMs?: number;
}): Promise<AppProcess> {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = once(child, 'exit');
  const ready = await new Promise<RegExpMatchArray>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${command} not ready after ${timeoutMs} ms:\n${output}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = output.match(readyPattern);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', code => {
      clearTimeout(timer);
      reject(new Error(`${command} exited (${code}) before it was ready:\n${output}`));
    });
  }).catch(async error => {
    if (child.exitCode === null) child.kill('SIGKILL');
    throw error;
  });

  const stop = async (killAfterMs = 15_000) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    await exited;
    clearTimeout(timer);
  };
  return { ready, output: () => output, stop, child };
}
