// A "replica" for the PID-namespace test: a process with one DockerSandbox on the main engine,
// driven by JSON commands on stdin, answering with JSON events on stdout. The test starts two
// of them with `unshare --pid --fork --mount-proc`, so both are PID 1 with the same host name.
import { hostname } from 'node:os';
import { createInterface } from 'node:readline';
import { DockerSandbox, type DockerSandboxSession } from '../../../src/sandbox/index.ts';

const send = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);

const sandbox = await DockerSandbox.create({
  image: process.env.AI_TOOLBELT_SANDBOX_IMAGE,
  warmPoolSize: 2,
  // Expiry is judged at once and often, to show a crashed replica's containers going; within
  // the test's own scope, so these sweeps never touch another test's containers.
  clockSkewMs: 0,
  sweepIntervalMs: 1_000,
  scope: process.env.AI_TOOLBELT_TEST_SCOPE,
  preimport: [],
});
while (sandbox.warmCount < 2) await new Promise(resolve => setTimeout(resolve, 20));
send({ event: 'ready', pid: process.pid, hostname: hostname(), instanceId: sandbox.instanceId });

let session: DockerSandboxSession | undefined;
for await (const line of createInterface({ input: process.stdin })) {
  const { command, ...args } = JSON.parse(line) as { command: string; [key: string]: unknown };
  try {
    if (command === 'run') {
      // Answers twice: when the code is running, and with the result.
      void sandbox
        .execute(String(args.code), {
          timeoutMs: 60_000,
          onOutput: ({ text }) => {
            if (text.includes('started')) send({ event: 'run-started', id: args.id });
          },
        })
        .then(
          result => send({ event: 'run-done', id: args.id, result }),
          (error: Error) => send({ event: 'run-done', id: args.id, error: error.message }),
        );
    } else if (command === 'session') {
      session = await sandbox.createSession({ ttlMs: Number(args.ttlMs ?? 3_600_000) });
      await session.writeTextFile({ path: 'note.txt', content: String(args.content) });
      send({ event: 'session-ready' });
    } else if (command === 'read') {
      send({ event: 'read', text: await session!.readTextFile({ path: 'note.txt' }) });
    } else if (command === 'status') {
      send({ event: 'status', warm: sandbox.warmCount });
    } else if (command === 'close') {
      await sandbox.close();
      send({ event: 'closed' });
      process.exit(0);
    }
  } catch (error) {
    send({ event: 'error', command, message: (error as Error).message });
  }
}
