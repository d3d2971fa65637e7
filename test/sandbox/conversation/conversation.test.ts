// Conversation interpreters on the real engine (Docker + gVisor): one live Python interpreter per
// conversation, across turns, users, replicas (another process sharing a Redis store) and loss
// (a killed container, a timeout, out of memory). Only the language model is scripted.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { generateText, stepCountIs, wrapLanguageModel } from 'ai';
import { createStorage } from 'unstorage';
import redisDriver from 'unstorage/drivers/redis';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { pythonTool } from '../../../src/python/python-tool.ts';
import { InvalidArgumentError } from '../../../src/errors/invalid-argument-error.ts';
import { SandboxBusyError } from '../../../src/errors/sandbox-busy-error.ts';
import { DockerSandbox, type SandboxCellResult } from '../../../src/sandbox/index.ts';
import { startRedisServer, describeRedis, type RedisServer } from '../../helpers/redis-server.ts';
import { errorTexts, repairDecisions, scriptedModel } from '../../helpers/scripted-model.ts';
import { repairGuardMiddleware } from '../../../src/middleware/repair-guard-middleware.ts';
import {
  SANDBOX_IMAGE,
  describeSandbox,
  docker,
  expectNoLeakedContainers,
  suiteSandbox,
} from '../sandbox-availability.ts';
import { chatTurn as turn } from './chat-turn.ts';
import { liveInterpreters } from './live-interpreters.ts';

const KEY = 'conversation-test-key-0123456789abcdef';
let conversations = 0;
/** A fresh conversation of `userId` (conversation ids are unique per test). */
const conversationOf = (userId = 'alice') => ({ id: `chat-${++conversations}`, userId });

describeSandbox('conversation interpreters (real engine)', () => {
  let sandbox: DockerSandbox;

  suiteSandbox({ warmPoolSize: 0, preimport: [], conversations: { maxPerUser: 3 } }, created => {
    sandbox = created;
  });

  it('three turns share variables, imports and files; the tool tells the model about state', async () => {
    const conversation = conversationOf();
    const first = await turn(
      sandbox,
      conversation,
      'import sympy\nrows = [3, 4, 5]\nopen("/tmp/notes.txt", "w").write("kept")\nprint(len(rows))',
    );
    expect(first.output).toMatchObject({ state: 'success', stdout: '3\n', cell: 1 });
    const second = await turn(sandbox, conversation, 'rows.append(6)\nprint(sum(rows))');
    expect(second.output).toMatchObject({ state: 'success', stdout: '18\n', cell: 2 });
    // An import made in cell 1 is still loaded in cell 3: nothing to pay again.
    const third = await turn(
      sandbox,
      conversation,
      'import sys\nprint("sympy" in sys.modules, rows, open("/tmp/notes.txt").read())',
    );
    expect(third.output).toMatchObject({ stdout: 'True [3, 4, 5, 6] kept\n', cell: 3 });
    expect(third.modelText).not.toContain('restored');
    expect(pythonTool({ sandbox, conversation }).description).toContain('notebook cells');
  });

  it("a new conversation's first cell runs in a waiting interpreter, started before it", async () => {
    const mineRunning = () => liveInterpreters(sandbox);
    // The pool (warmPoolSize 1) keeps one waiting: note those running before the cell.
    await vi.waitFor(async () => expect((await mineRunning()).length).toBeGreaterThan(0), {
      timeout: 60_000,
      interval: 100,
    });
    const before = await mineRunning();
    const first = await sandbox.executeCell('import socket\nprint(socket.gethostname())', {
      conversation: conversationOf('hana'),
    });
    const host = first.stdout.trim();
    expect(before.some(id => id.startsWith(host))).toBe(true);
  });

  it('attached files are placed once and stay for later cells', async () => {
    const conversation = conversationOf();
    const files = [{ path: 'inputs/sales.csv', data: 'region,amount\nnorth,3\nsouth,4\n' }];
    await sandbox.executeCell('import csv', { conversation, files });
    const later = await sandbox.executeCell(
      'print(sum(int(r["amount"]) for r in csv.DictReader(open("/tmp/inputs/sales.csv"))))',
      { conversation },
    );
    expect(later).toMatchObject({ status: 'success', stdout: '7\n' });
  });

  it("another user with the same conversation id gets a new interpreter, never the first one's", async () => {
    const alice = conversationOf('alice');
    await sandbox.executeCell('secret = "alice-only"\nopen("/tmp/alice.txt", "w").write("x")', {
      conversation: alice,
    });
    const bob = { id: alice.id, userId: 'bob' };
    const probe = await sandbox.executeCell(
      'import os\nprint(os.path.exists("/tmp/alice.txt"))\nprint(secret)',
      { conversation: bob },
    );
    expect(probe.stdout).toBe('False\n');
    expect(probe.status).toBe('error');
    expect(probe.stderr).toContain("NameError: name 'secret' is not defined");
    expect(probe.cell).toBe(1);
    expect(probe.restored).toBeUndefined();
  });

  it('a killed interpreter is restored before the next cell, and the model is told', async () => {
    const conversation = conversationOf();
    await turn(sandbox, conversation, 'import random\nbase = 40\nfactor = 2');
    // A container's host name is the start of its id: the cell names its own interpreter.
    const second = await turn(
      sandbox,
      conversation,
      'total = base + factor\nimport socket\nprint(socket.gethostname())',
    );
    const host = String(second.output.stdout).trim();
    const [mine] = (await liveInterpreters(sandbox)).filter(id => id.startsWith(host));
    await docker.getContainer(mine!).kill();
    const after = await turn(sandbox, conversation, 'print(total)');
    expect(after.output).toMatchObject({ state: 'success', stdout: '42\n', cell: 3 });
    expect(after.output.restored).toBe(
      'Python state restored by re-running 2 earlier cells (it had stopped). Random draws repeat ' +
        '(random and NumPy are seeded per conversation); the clock, os.urandom, uuid4 and anything ' +
        'read from outside may differ.',
    );
    expect(after.modelText).toContain('[Python state restored by re-running 2 earlier cells');
  });

  it('with inline repair, the repaired result still says the state was restored', async () => {
    const conversation = conversationOf();
    await sandbox.executeCell('import socket\nrate = 3', { conversation });
    const host = (
      await sandbox.executeCell('print(socket.gethostname())', { conversation })
    ).stdout.trim();
    const [mine] = (await liveInterpreters(sandbox)).filter(id => id.startsWith(host));
    await docker.getContainer(mine!).kill();
    const repairModel = scriptedModel([{ text: '```python\nprint(rate * 2)\n```' }]);
    const main = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'print(rates * 2)' } }] },
      { text: '6' },
    ]);
    const result = await generateText({
      model: main,
      tools: { python: pythonTool({ sandbox, conversation, repair: { model: repairModel } }) },
      prompt: 'double the rate',
      stopWhen: stepCountIs(3),
    });
    const summary = 'Python state restored by re-running 2 earlier cells (it had stopped).';
    // (the line goes on about what a replay cannot repeat)
    expect(JSON.stringify(repairModel.calls[0]!.prompt)).toContain(summary);
    expect(result.steps[0]!.toolResults[0]!.output).toMatchObject({
      state: 'success',
      attempts: 2,
      stdout: '6\n',
      restored: expect.stringContaining(summary),
    });
    const toolMessage = main.calls[1]!.prompt.find(message => message.role === 'tool')!;
    expect(JSON.stringify(toolMessage.content)).toContain(`[${summary}`);
  });

  it('a cell killed at its timeout ends as a timeout; the next cell gets the state back', async () => {
    const conversation = conversationOf();
    await sandbox.executeCell('n = 7', { conversation });
    // It ignores the interrupt, so it is killed (notebook-cells.test.ts: one that stops on it).
    const stubborn =
      'import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    n += 1';
    const stuck = await sandbox.executeCell(stubborn, {
      conversation,
      timeoutMs: 1_500,
    });
    expect(stuck).toMatchObject({ status: 'timeout', cell: 2 });
    const next = await sandbox.executeCell('print(n)', { conversation });
    // The timed-out cell was not kept: n is 7 again, as its last successful cell left it.
    expect(next).toMatchObject({ status: 'success', stdout: '7\n', cell: 3 });
    expect(next.restored).toMatchObject({ method: 'replay', cells: 1, failed: [] });
  });

  it('a cell that runs out of memory ends as oom; the next cell works, restored', async () => {
    const conversation = conversationOf();
    await sandbox.executeCell('label = "before"', { conversation });
    const bomb = await sandbox.executeCell(
      'blocks = []\nwhile True:\n    blocks.append(bytearray(64 << 20))',
      {
        conversation,
        timeoutMs: 60_000,
      },
    );
    expect(bomb.status).toBe('oom');
    const next = await sandbox.executeCell('print(label)', { conversation });
    expect(next).toMatchObject({ status: 'success', stdout: 'before\n' });
    expect(next.restored?.summary).toMatch(/^Python state restored by re-running 1 earlier cell /);
  });

  it('an onOutput that throws ends the cell with its error; an abort ends it with the reason', async () => {
    const conversation = conversationOf();
    await sandbox.executeCell('kept = "yes"', { conversation });
    const thrown = new Error('the client went away');
    await expect(
      sandbox.executeCell('import time\nprint("tick", flush=True)\ntime.sleep(30)', {
        conversation,
        onOutput: () => {
          throw thrown;
        },
      }),
    ).rejects.toBe(thrown);
    const controller = new AbortController();
    const aborted = sandbox.executeCell('import time\ntime.sleep(30)', {
      conversation,
      abortSignal: controller.signal,
    });
    setTimeout(() => controller.abort(new Error('stop')), 500);
    await expect(aborted).rejects.toThrow('stop');
    // Both killed the interpreter; the next cell restores it.
    const next = await sandbox.executeCell('print(kept)', { conversation });
    expect(next).toMatchObject({ status: 'success', stdout: 'yes\n' });
    expect(next.restored?.cells).toBe(1);
  });

  it('a failed cell leaves the state as Python leaves it, and is not replayed', async () => {
    const conversation = conversationOf();
    const failed = await sandbox.executeCell('partial = 1\nraise ValueError("late")', {
      conversation,
    });
    expect(failed).toMatchObject({ status: 'error' });
    expect((await sandbox.executeCell('print(partial)', { conversation })).stdout).toBe('1\n');
  });

  it('repair attempts are new cells of the same interpreter; the budget and halt work as before', async () => {
    const conversation = conversationOf();
    await turn(sandbox, conversation, 'prices = [3, 5, 8]');
    const model = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'print(sum(price))' } }] },
      { toolCalls: [{ name: 'python', input: { code: 'print(sum(prices))' } }] },
      { text: 'The total is 16.' },
    ]);
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: repairGuardMiddleware() }),
      tools: { python: pythonTool({ sandbox, conversation }) },
      prompt: 'total?',
      stopWhen: stepCountIs(5),
    });
    expect(result.steps[0]!.toolResults[0]!.output).toMatchObject({
      state: 'failed',
      status: 'error',
      cell: 2,
    });
    expect(errorTexts(model)[0]).toContain("NameError: name 'price' is not defined");
    expect(result.steps[1]!.toolResults[0]!.output).toMatchObject({
      state: 'success',
      attempt: 2,
      stdout: '16\n',
      cell: 3,
    });
    expect(repairDecisions(model)).toEqual(['repair:repairable']);
  });

  it('a cell forging 200,000 records on its records pipe is stopped at the caps, host memory bounded', async () => {
    const conversation = conversationOf('mallory');
    await sandbox.executeCell('x = 1', { conversation });
    // The kernel's records pipe is one of its own fds: write zero-byte file records to every
    // pipe it can write, as an attacker who read interpreter_kernel.py would.
    const forge = [
      'import os, json',
      'record = b"file " + json.dumps({"kind": "file", "path": "outputs/f.txt", "mediaType": "text/plain", "bytes": 0}).encode() + b"\\n"',
      'frame = b"rec %d\\n" % len(record) + record',
      'for fd in range(3, 64):',
      '    try:',
      '        if os.readlink("/proc/self/fd/%d" % fd).startswith("pipe:"):',
      '            for _ in range(200_000):',
      '                os.write(fd, frame)',
      '    except OSError:',
      '        pass',
    ].join('\n');
    const heapBefore = process.memoryUsage().heapUsed;
    const flood = await sandbox.executeCell(forge, { conversation, timeoutMs: 60_000 });
    const grown = process.memoryUsage().heapUsed - heapBefore;
    expect(flood.status).toBe('output-limit');
    expect(flood.files.length).toBeLessThanOrEqual(20);
    expect(grown).toBeLessThan(32 * 1024 * 1024);
    // The interpreter was stopped; the next cell restores it.
    const next = await sandbox.executeCell('print(x)', { conversation });
    expect(next).toMatchObject({ status: 'success', stdout: '1\n' });
  });

  it('past maxPerUser, the user\u2019s least recently used interpreter is evicted, then restored', async () => {
    const conversationsOfCarol = [1, 2, 3, 4].map(() => conversationOf('carol'));
    for (const [i, conversation] of conversationsOfCarol.entries()) {
      await sandbox.executeCell(`mine = ${i}`, { conversation });
    }
    const first = await sandbox.executeCell('print(mine)', {
      conversation: conversationsOfCarol[0]!,
    });
    expect(first).toMatchObject({ status: 'success', stdout: '0\n' });
    expect(first.restored?.cells).toBe(1);
  });

  it('refuses bad conversations and a store without a key', async () => {
    await expect(
      sandbox.executeCell('1', { conversation: { id: '', userId: 'x' } }),
    ).rejects.toSatisfy(error => InvalidArgumentError.isInstance(error));
    // A store that outlives the process (anything but unstorage's memory driver) needs a key.
    const persistent = createStorage({
      driver: redisDriver({ url: 'redis://127.0.0.1:1', lazyConnect: true }),
    });
    expect(() => new DockerSandbox({ conversations: { store: persistent } })).toThrow(
      /conversations\.encryptionKey/,
    );
    expect(() => new DockerSandbox({ conversations: { store: createStorage() } })).not.toThrow();
  });
});

describeRedis('conversation interpreters across replicas', () => {
  describeSandbox('a second process continues the conversation', () => {
    let redis: RedisServer;
    let sandbox: DockerSandbox;
    const store = () => createStorage({ driver: redisDriver({ url: redis.url }) });
    let shared: ReturnType<typeof store>;

    beforeAll(async () => {
      redis = await startRedisServer();
      shared = store();
      sandbox = await DockerSandbox.create({
        image: SANDBOX_IMAGE,
        docker,
        warmPoolSize: 0,
        preimport: [],
        conversations: { store: shared, encryptionKey: KEY },
      });
    });
    afterAll(async () => {
      await sandbox?.close();
      await shared?.dispose();
      await redis?.stop();
      await expectNoLeakedContainers();
    });

    it('reaches the same interpreter from another process, and keeps code sealed at rest', async () => {
      const conversation = conversationOf('dana');
      await sandbox.executeCell('shared_value = 21', { conversation });
      const replica = await runReplica(
        redis.url,
        conversation,
        'shared_value *= 2\nprint(shared_value)',
      );
      expect(replica).toMatchObject({ status: 'success', stdout: '42\n', cell: 2 });
      expect(replica.restored).toBeUndefined();
      expect(replica.instanceId).not.toBe(sandbox.instanceId);
      const back = await sandbox.executeCell('print(shared_value)', { conversation });
      expect(back).toMatchObject({ stdout: '42\n', cell: 3 });
      const raw = JSON.stringify(
        await Promise.all((await shared.getKeys()).map(key => shared.getItem(key))),
      );
      expect(raw).not.toContain('shared_value');
      expect(raw).not.toContain('dana');
    });
  });
});

/** Runs one cell in a replica process; resolves with what it printed. */
async function runReplica(
  url: string,
  conversation: { id: string; userId: string },
  code: string,
): Promise<SandboxCellResult & { instanceId: string }> {
  const fixture = fileURLToPath(new URL('../fleet/conversation-replica.ts', import.meta.url));
  const child = spawn(
    process.execPath,
    [fixture, url, KEY, conversation.id, conversation.userId, code],
    { env: { ...process.env, AI_TOOLBELT_SANDBOX_IMAGE: SANDBOX_IMAGE } },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', chunk => (stdout += chunk));
  child.stderr.on('data', chunk => (stderr += chunk));
  const code_ = await new Promise<number | null>(resolve => child.on('exit', resolve));
  if (code_ !== 0) throw new Error(`replica exited ${code_}: ${stderr}`);
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

describeSandbox('conversation interpreters: idle expiry and history bounds', () => {
  let sandbox: DockerSandbox;
  suiteSandbox(
    { warmPoolSize: 0, preimport: [], conversations: { idleMs: 1_000, maxHistoryBytes: 64 } },
    created => {
      sandbox = created;
    },
  );

  it('an idle interpreter ends by itself; the next cell restores it and says why', async () => {
    const conversation = conversationOf('frank');
    await sandbox.executeCell('word = "kept"', { conversation });
    // The supervisor exits after idleMs without a cell: wait until the container has stopped.
    await vi.waitFor(
      async () => {
        expect(await liveInterpreters(sandbox)).toEqual([]);
      },
      { timeout: 30_000, interval: 200 },
    );
    const next = await sandbox.executeCell('print(word)', { conversation });
    expect(next).toMatchObject({ status: 'success', stdout: 'kept\n' });
    expect(next.restored).toMatchObject({ reason: 'idle', cells: 1 });
    expect(next.restored?.summary).toContain('it had been idle for');
  });

  it('cells past maxHistoryBytes are dropped oldest first, and the restore says what is missing', async () => {
    const conversation = conversationOf('gina');
    await sandbox.executeCell(`first = 1  # ${'x'.repeat(30)}`, { conversation });
    await sandbox.executeCell(`second = 2  # ${'y'.repeat(30)}`, { conversation });
    const live = await liveInterpreters(sandbox);
    // Killed, unless its 1 s idle expiry ended it first: lost either way.
    await Promise.all(
      live.map(id =>
        docker
          .getContainer(id)
          .kill()
          .catch(() => {}),
      ),
    );
    const next = await sandbox.executeCell('print(second)\nprint(first)', { conversation });
    expect(next.stdout).toBe('2\n');
    expect(next.stderr).toContain("NameError: name 'first' is not defined");
    expect(next.restored).toMatchObject({ cells: 1, dropped: 1 });
    expect(next.restored?.summary).toContain(
      '1 older cell was not kept, so what it defined is missing',
    );
  });
});

describeSandbox('conversation interpreters: bounds', () => {
  let sandbox: DockerSandbox;
  // A scope of its own: the bounds count only this scope's interpreters on the shared engine.
  suiteSandbox(
    {
      warmPoolSize: 0,
      preimport: [],
      scope: `bounds-${process.pid}`,
      conversations: { maxInterpreters: 2, warmPoolSize: 1 },
    },
    created => {
      sandbox = created;
    },
  );

  it('waiting interpreters count toward maxInterpreters: past it a new conversation is refused', async () => {
    await sandbox.executeCell('a = 1', { conversation: conversationOf('ivy') });
    await sandbox.executeCell('b = 1', { conversation: conversationOf('jack') });
    const third = sandbox.executeCell('c = 1', { conversation: conversationOf('kim') });
    await expect(third).rejects.toSatisfy(SandboxBusyError.isInstance);
    // The pool did not start a waiting one past the bound either.
    await sandbox.waitForCleanup();
    expect((await liveInterpreters(sandbox)).length).toBeLessThanOrEqual(2);
  });
});

describeSandbox('conversation interpreters: one user at once', () => {
  let sandbox: DockerSandbox;
  suiteSandbox({ warmPoolSize: 0, preimport: [], conversations: { maxPerUser: 2 } }, created => {
    sandbox = created;
  });

  it('new conversations started together stay within maxPerUser', async () => {
    const conversations = [1, 2, 3].map(() => conversationOf('lena'));
    const results = await Promise.allSettled(
      conversations.map(conversation => sandbox.executeCell('x = 1', { conversation })),
    );
    // Each placement sees the ones before it: the third evicts an idle one (or, when both are
    // still busy, is refused), never a third live interpreter the user's list forgot.
    for (const result of results) {
      if (result.status === 'rejected')
        expect(SandboxBusyError.isInstance(result.reason)).toBe(true);
    }
    expect(results.filter(result => result.status === 'fulfilled').length).toBeGreaterThanOrEqual(
      2,
    );
    expect((await liveInterpreters(sandbox)).length).toBeLessThanOrEqual(2);
  });
});
