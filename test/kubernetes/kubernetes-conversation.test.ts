import { createStorage } from 'unstorage';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DockerSandbox, type DockerSandboxOptions } from '../../src/sandbox/index.ts';
import { chatTurn as turn } from '../sandbox/conversation/chat-turn.ts';
import { SANDBOX_IMAGE, describeKubernetes, kubectl } from './cluster.ts';
import { type SandboxNamespace, createSandboxNamespace } from './sandbox-namespace.ts';

// Conversation interpreters on the Kubernetes engine: the python tool across turns, a restore
// after the interpreter's pod is deleted, the interrupt at a cell's timeout, another replica
// serving the next cell, and no pod left after close().
const KEY = 'kubernetes-conversation-key-0123456789abcdef';
const store = createStorage();
let ns: SandboxNamespace;
let sandbox: DockerSandbox;
let conversations = 0;
const conversationOf = (userId = 'alice') => ({ id: `chat-${++conversations}`, userId });

function options(): DockerSandboxOptions {
  return {
    engines: [ns.engine()],
    image: SANDBOX_IMAGE,
    warmPoolSize: 0,
    preimport: [],
    conversations: { store, encryptionKey: KEY, warmPoolSize: 1 },
  };
}

/** The pod a conversation's interpreter runs in (its HOSTNAME is the pod's name). */
async function podOf(conversation: { id: string; userId: string }): Promise<string> {
  const run = await sandbox.executeCell('import os\nprint(os.environ["HOSTNAME"])', {
    conversation,
    timeoutMs: 30_000,
  });
  return run.stdout.trim();
}

describeKubernetes('Kubernetes engine: conversation interpreters in pods', () => {
  beforeAll(async () => {
    ns = await createSandboxNamespace();
    sandbox = await DockerSandbox.create(options());
  }, 120_000);

  afterAll(async () => {
    await sandbox?.close();
    await ns?.remove();
  }, 180_000);

  it('the python tool keeps variables, imports and files across turns in one pod', async () => {
    const conversation = conversationOf();
    const first = await turn(
      sandbox,
      conversation,
      'import json\nrows = [3, 4, 5]\nopen("/tmp/notes.txt", "w").write("kept")\nprint(len(rows))',
    );
    expect(first.output).toMatchObject({ state: 'success', stdout: '3\n', cell: 1 });
    const second = await turn(sandbox, conversation, 'rows.append(6)\nsum(rows)');
    expect(second.output).toMatchObject({ state: 'success', cell: 2 });
    expect(second.modelText).toContain('Out: 18');
    const third = await turn(
      sandbox,
      conversation,
      'import sys\nprint("json" in sys.modules, rows, open("/tmp/notes.txt").read())',
    );
    expect(third.output).toMatchObject({ stdout: 'True [3, 4, 5, 6] kept\n', cell: 3 });
    expect(third.modelText).not.toContain('restored');
  }, 120_000);

  it('restores the state in a new pod after its pod is deleted', async () => {
    const conversation = conversationOf();
    await sandbox.executeCell('total = 40\nopen("/tmp/a.txt", "w").write("x")', {
      conversation,
      files: [{ path: 'inputs/n.txt', data: '2' }],
      timeoutMs: 30_000,
    });
    const pod = await podOf(conversation);
    expect(pod).toMatch(/^ai-toolbelt-conversation-/);
    await kubectl(['delete', 'pod', pod, '-n', ns.namespace, '--wait=true']);
    const after = await sandbox.executeCell(
      'print(total + int(open("/tmp/inputs/n.txt").read()))',
      { conversation, timeoutMs: 30_000 },
    );
    expect(after).toMatchObject({ status: 'success', stdout: '42\n' });
    expect(after.restored).toMatchObject({ method: 'replay', reason: 'stopped', cells: 2 });
    expect(await podOf(conversation)).not.toBe(pod);
  }, 180_000);

  it('interrupts a cell at its timeout and keeps the interpreter and its state', async () => {
    const conversation = conversationOf();
    await sandbox.executeCell('kept = "still here"', { conversation, timeoutMs: 30_000 });
    const pod = await podOf(conversation);
    const slow = await sandbox.executeCell('import time\ntime.sleep(60)', {
      conversation,
      timeoutMs: 1_500,
    });
    expect(slow).toMatchObject({ status: 'timeout', interrupted: true });
    expect(slow.stderr).toContain('KeyboardInterrupt');
    const next = await sandbox.executeCell('print(kept)', { conversation, timeoutMs: 30_000 });
    expect(next).toMatchObject({ status: 'success', stdout: 'still here\n' });
    expect(next.restored).toBeUndefined();
    expect(await podOf(conversation)).toBe(pod);
  }, 120_000);

  it('a cell that runs out of memory ends its pod; the next cell restores the rest', async () => {
    const conversation = conversationOf();
    await sandbox.executeCell('base = 7', { conversation, timeoutMs: 30_000 });
    const bomb = await sandbox.executeCell('b = []\nwhile True:\n    b.append(bytearray(10**7))', {
      conversation,
      timeoutMs: 60_000,
    });
    expect(bomb.status).toBe('oom');
    expect(bomb.ended).toBeDefined();
    const next = await sandbox.executeCell('print(base * 6)', { conversation, timeoutMs: 30_000 });
    expect(next).toMatchObject({ status: 'success', stdout: '42\n' });
    expect(next.restored).toMatchObject({ method: 'replay' });
  }, 180_000);

  it("another replica sharing the store serves the next cell in the same pod; its close() leaves the first replica's pods", async () => {
    const conversation = conversationOf('bob');
    await sandbox.executeCell('shared = "from replica one"', { conversation, timeoutMs: 30_000 });
    const pod = await podOf(conversation);
    const other = await DockerSandbox.create({
      ...options(),
      conversations: { store, encryptionKey: KEY, warmPoolSize: 0 },
    });
    try {
      const next = await other.executeCell('import os\nprint(shared, os.environ["HOSTNAME"])', {
        conversation,
        timeoutMs: 30_000,
      });
      expect(next).toMatchObject({ status: 'success', stdout: `from replica one ${pod}\n` });
      expect(next.restored).toBeUndefined();
    } finally {
      await other.close();
    }
    // The other replica served the last cell: the interpreter is its to remove.
    expect((await ns.pods()).map(found => found.name)).not.toContain(pod);
  }, 180_000);

  it('leaves no pod after close()', async () => {
    await sandbox.close();
    expect((await ns.pods()).filter(pod => !pod.deleting)).toEqual([]);
    sandbox = await DockerSandbox.create(options());
  }, 120_000);
});
