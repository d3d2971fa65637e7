import { expect, it } from 'vitest';
import { DockerSandbox, SandboxClosedError } from '../../../src/sandbox/index.ts';
import { SANDBOX_IMAGE, describeSandbox, docker, suiteSandbox } from '../sandbox-availability.ts';

describeSandbox('DockerSandbox warm pool', () => {
  let sandbox: DockerSandbox;

  suiteSandbox({ warmPoolSize: 4, maxConcurrentExecutions: 4, preimport: [] }, created => {
    sandbox = created;
  });

  it('runs 50 concurrent executions through a pool of 4, each in its own container', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        sandbox.execute(
          `import socket, os\nopen("/tmp/mark", "a").write("x")\n` +
            `print(${i} * 3, socket.gethostname(), os.path.getsize("/tmp/mark"))`,
          { timeoutMs: 60_000 },
        ),
      ),
    );
    const hosts = new Set<string>();
    results.forEach((result, i) => {
      expect(result.status).toBe('success');
      const [value, host, marks] = result.stdout.trim().split(' ');
      expect(Number(value)).toBe(i * 3);
      // One use per container: nothing written by an earlier run is visible.
      expect(marks).toBe('1');
      hosts.add(host!);
    });
    expect(hosts.size).toBe(50);
  }, 120_000);

  it('refills the pool in the background', async () => {
    await sandbox.execute('print(1)');
    await expect.poll(() => sandbox.warmCount, { timeout: 30_000, interval: 50 }).toBe(4);
  });

  it('close() kills runs in flight and removes idle and used containers', async () => {
    const local = await DockerSandbox.create({
      image: SANDBOX_IMAGE,
      docker,
      warmPoolSize: 2,
      preimport: [],
    });
    let started!: () => void;
    const running = new Promise<void>(resolve => (started = resolve));
    const run = local.execute('import time\nprint("in", flush=True)\ntime.sleep(120)', {
      timeoutMs: 120_000,
      onOutput: () => started(),
    });
    const outcome = run.then(
      () => 'resolved',
      (error: unknown) => error,
    );
    await running;
    await local.close();
    expect(SandboxClosedError.isInstance(await outcome)).toBe(true);
    await expect(local.execute('print(1)')).rejects.toSatisfy(SandboxClosedError.isInstance);
    await local.close(); // twice is fine
  });
});
