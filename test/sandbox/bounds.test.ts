import { expect, it } from 'vitest';
import { DockerSandbox, SandboxBusyError } from '../../src/sandbox/index.ts';
import { describeSandbox, suiteSandbox } from './sandbox-availability.ts';

describeSandbox('DockerSandbox bounds: waiting runs and open sessions', () => {
  let sandbox: DockerSandbox;

  suiteSandbox(
    { warmPoolSize: 0, maxConcurrentExecutions: 1, maxQueued: 1, maxSessions: 1, preimport: [] },
    created => {
      sandbox = created;
    },
  );

  it('rejects a run with SandboxBusyError when maxQueued runs already wait', async () => {
    let started!: () => void;
    const running = new Promise<void>(resolve => (started = resolve));
    const first = sandbox.execute('import time\nprint("in", flush=True)\ntime.sleep(2)', {
      timeoutMs: 30_000,
      onOutput: () => started(),
    });
    await running;
    const second = sandbox.execute('print("queued")', { timeoutMs: 30_000 });
    const third = await sandbox.execute('print("refused")').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(SandboxBusyError.isInstance(third)).toBe(true);
    expect(third).toMatchObject({ resource: 'runs', limit: 1 });
    expect((third as Error).message).toContain('maxQueued');
    expect(await first).toMatchObject({ status: 'success' });
    expect(await second).toMatchObject({ status: 'success', stdout: 'queued\n' });
  }, 60_000);

  it('rejects a session with SandboxBusyError when maxSessions are open, and takes one after a close', async () => {
    const session = await sandbox.createSession();
    const refused = await sandbox.createSession().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(SandboxBusyError.isInstance(refused)).toBe(true);
    expect(refused).toMatchObject({ resource: 'sessions', limit: 1 });
    await session.close();
    const next = await sandbox.createSession();
    expect(await next.run({ command: 'echo ok' })).toMatchObject({ stdout: 'ok\n' });
    await next.close();
  }, 60_000);
});
