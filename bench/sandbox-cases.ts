// The measurements of bench:sandbox, written against any version of DockerSandbox (the current
// one, or the one before the hardening for bench/hardening.ts), so both run the same bench.
import type Docker from 'dockerode';
import { type ClosedLoopResult, closedLoop } from './closed-loop.ts';

/** What the bench needs of a DockerSandbox, in every version measured. */
export type SandboxLike = {
  execute(
    code: string,
    options?: { timeoutMs?: number },
  ): Promise<{ status: string; stdout: string }>;
  waitForCleanup(): Promise<void>;
  close(): Promise<void>;
  readonly warmReadyCount: number;
  readonly runtime: string | undefined;
  readonly instanceId: string;
};

/** `DockerSandbox` itself (its static `create`). */
export type SandboxClass = { create(options: Record<string, unknown>): Promise<SandboxLike> };

export const percentile = (xs: number[], p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
};
export const round = (x: number): number => Math.round(x * 10) / 10;

/** Throws unless the run printed exactly `1`. */
export function check(result: { status: string; stdout: string }): void {
  if (result.status !== 'success' || result.stdout !== '1\n') {
    throw new Error(`unexpected result: ${JSON.stringify(result)}`);
  }
}

/** Until `size` warm containers are ready: started, and their bootstrap waits for code. */
export async function untilWarm(sandbox: SandboxLike, size: number): Promise<void> {
  await sandbox.waitForCleanup();
  while (sandbox.warmReadyCount < size) await new Promise(resolve => setTimeout(resolve, 20));
}

/**
 * One cold `print(1)` (no warm pool: create, attach, start, run): the time to its result, as the
 * caller sees it, and to its container being gone (the removal the sandbox runs after it).
 *
 * @example
 * ```ts
 * const { toResultMs, toGoneMs } = await coldOnce(sandbox);
 * ```
 */
export async function coldOnce(
  sandbox: SandboxLike,
): Promise<{ toResultMs: number; toGoneMs: number }> {
  await sandbox.waitForCleanup();
  const started = performance.now();
  check(await sandbox.execute('print(1)'));
  const result = performance.now();
  await sandbox.waitForCleanup();
  return { toResultMs: result - started, toGoneMs: performance.now() - started };
}

/** One warm `print(1)`: a pool hit (the pool full and ready before it), timed to its result. */
export async function warmOnce(sandbox: SandboxLike, poolSize: number): Promise<number> {
  await untilWarm(sandbox, poolSize);
  const started = performance.now();
  check(await sandbox.execute('print(1)'));
  return performance.now() - started;
}

/**
 * Steady-state runs/s of 4 callers through a sandbox with a pool of 4 and 4 execution slots
 * (see closed-loop.ts), `print(1)` each; a new sandbox per call.
 *
 * @example
 * ```ts
 * const { perSec } = await sandboxThroughput({ Sandbox: DockerSandbox, docker, image, preimport: false, seconds: 10, warmupRuns: 8 });
 * ```
 */
export async function sandboxThroughput({
  Sandbox,
  docker,
  image,
  preimport,
  starts,
  seconds,
  warmupRuns,
}: {
  /** The DockerSandbox class measured. */
  Sandbox: SandboxClass;
  /** Docker client. */
  docker: Docker;
  /** The sandbox image. */
  image: string;
  /** Pre-imports on (the default) or off. */
  preimport: boolean;
  /** `maxConcurrentStarts`, when not the default. */
  starts?: number | undefined;
  /** Length of the window. */
  seconds: number;
  /** Runs before the window opens. */
  warmupRuns: number;
}): Promise<ClosedLoopResult> {
  const sandbox = await Sandbox.create({
    docker,
    image,
    warmPoolSize: 4,
    maxConcurrentExecutions: 4,
    ...(starts === undefined ? {} : { maxConcurrentStarts: starts }),
    ...(preimport ? {} : { preimport: [] }),
  });
  try {
    return await closedLoop({
      callers: 4,
      warmupRuns,
      seconds,
      run: async () => check(await sandbox.execute('print(1)', { timeoutMs: 60_000 })),
    });
  } finally {
    await sandbox.close();
  }
}
