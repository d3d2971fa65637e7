// Conversation history under pressure on the real engine (issue 38, findings 3 to 6): file
// versions replayed in order, files taken again after a restore, a failed replay that keeps the
// history, each cell's own limit and an overall deadline in a replay, a busy mark that covers
// it, bounded waiting cells, the "variables are gone" line, and one replica's close() leaving
// the interpreter another one serves.
import { createStorage } from 'unstorage';
import { expect, it, vi } from 'vitest';
import { SandboxBusyError } from '../../../src/errors/sandbox-busy-error.ts';
import { DockerSandbox, type SandboxCellResult } from '../../../src/sandbox/index.ts';
import {
  SANDBOX_IMAGE,
  describeSandbox,
  docker,
  expectNoLeakedContainers,
  suiteSandbox,
} from '../sandbox-availability.ts';
import { chatTurn } from './chat-turn.ts';
import { liveInterpreters } from './live-interpreters.ts';

let conversations = 0;
const conversationOf = (userId = 'ann') => ({ id: `pressure-${++conversations}`, userId });
const text = (value: string) => new TextEncoder().encode(value);

/** Kills every live interpreter of the sandbox (earlier tests' conversations are done with theirs). */
async function killInterpreters(sandbox: DockerSandbox): Promise<void> {
  const live = await liveInterpreters(sandbox);
  await Promise.all(
    live.map(id =>
      docker
        .getContainer(id)
        .kill()
        .catch(() => {}),
    ),
  );
}

/** Waits until the wall clock passes `epochSeconds` (the cells below compare against it). */
async function clockPasses(epochSeconds: number): Promise<void> {
  await vi.waitFor(() => expect(Date.now() / 1000).toBeGreaterThan(epochSeconds), {
    timeout: 15_000,
    interval: 50,
  });
}

describeSandbox('conversation history under pressure (real engine)', () => {
  let sandbox: DockerSandbox;
  suiteSandbox(
    { warmPoolSize: 0, preimport: [], conversations: { maxPerUser: 3, maxHistoryBytes: 4_096 } },
    created => {
      sandbox = created;
    },
  );

  it('after a restore, cell 1 reads version 1 of a file and cell 2 version 2', async () => {
    const conversation = conversationOf();
    const path = 'inputs/x.txt';
    const read = (name: string) => `${name} = open('/tmp/inputs/x.txt').read()`;
    await sandbox.executeCell(read('a'), { conversation, files: [{ path, data: text('one') }] });
    await sandbox.executeCell(read('b'), { conversation, files: [{ path, data: text('two') }] });
    await killInterpreters(sandbox);
    const after = await sandbox.executeCell('print(a, b)', {
      conversation,
      files: [{ path, data: text('two') }],
    });
    expect(after.stderr).toBe('');
    expect(after).toMatchObject({ status: 'success', stdout: 'one two\n' });
    expect(after.restored).toMatchObject({ cells: 2, missingFiles: [] });
  });

  it('a file too big to keep is placed again when the app sends it after a restore', async () => {
    const conversation = conversationOf();
    const files = [{ path: 'inputs/big.bin', data: new Uint8Array(10_000).fill(1) }];
    await sandbox.executeCell('n = 1', { conversation, files });
    await killInterpreters(sandbox);
    const code = "import os\nprint(os.path.getsize('/tmp/inputs/big.bin'), n)";
    const after = await sandbox.executeCell(code, { conversation, files });
    expect(after).toMatchObject({ status: 'success', stdout: '10000 1\n' });
    expect(after.restored?.summary).toContain('input files not restored: inputs/big.bin');
  });

  it('a replay ended by a kept cell keeps the history: the next cell restores it', async () => {
    const conversation = conversationOf();
    // Cell 2 ends its interpreter only when re-run within a window of the clock: by bad luck.
    const from = Date.now() / 1000 + 1;
    const until = from + 6;
    await sandbox.executeCell('x = 1', { conversation });
    const unlucky = `import os, time\nif ${from} < time.time() < ${until}: os._exit(3)\ny = 2`;
    expect((await sandbox.executeCell(unlucky, { conversation })).status).toBe('success');
    await clockPasses(from);
    await killInterpreters(sandbox);
    const failed = await sandbox.executeCell('print(x, y)', { conversation });
    expect(failed).toMatchObject({ status: 'crashed', stdout: '', cell: 2 });
    expect(failed.restored?.summary).toContain('This cell did not run');
    expect(failed.restored?.summary).toContain('the next cell tries the restore again');
    await clockPasses(until);
    const next = await sandbox.executeCell('print(x, y)', { conversation });
    expect(next).toMatchObject({ status: 'success', stdout: '1 2\n', cell: 3 });
    expect(next.restored).toMatchObject({ cells: 2, failed: [] });
  }, 60_000);

  it('a second restore in a row ended by a kept cell gives the history up, and says so', async () => {
    const conversation = conversationOf();
    const from = Date.now() / 1000 + 1;
    await sandbox.executeCell('x = 1', { conversation });
    await sandbox.executeCell(`import os, time\nif time.time() > ${from}: os._exit(3)`, {
      conversation,
    });
    await clockPasses(from);
    await killInterpreters(sandbox);
    const first = await sandbox.executeCell('print("hi")', { conversation });
    expect(first).toMatchObject({ status: 'crashed', cell: 2 });
    const second = await sandbox.executeCell('print("hi")', { conversation });
    expect(second).toMatchObject({ status: 'success', stdout: 'hi\n', cell: 3 });
    expect(second.restored?.summary).toContain(
      'It happened twice, so the earlier cells were given up',
    );
    const third = await sandbox.executeCell('print(x)', { conversation });
    expect(third.stderr).toContain("NameError: name 'x' is not defined");
    expect(third.restored).toBeUndefined();
  }, 60_000);

  it('a replay gives each cell its own time limit, not that of the cell restoring', async () => {
    const conversation = conversationOf();
    await sandbox.executeCell('import time\ntime.sleep(1.5)\nslow = 1', {
      conversation,
      timeoutMs: 20_000,
    });
    await killInterpreters(sandbox);
    const after = await sandbox.executeCell('print(slow)', { conversation, timeoutMs: 1_000 });
    expect(after).toMatchObject({ status: 'success', stdout: '1\n' });
    expect(after.restored).toMatchObject({ cells: 1, failed: [] });
  });

  it('a cell that ends its interpreter tells the model its variables are gone, and what comes back', async () => {
    const conversation = conversationOf();
    await sandbox.executeCell('v = 1', { conversation });
    // It ignores the interrupt at its deadline, so its interpreter is killed.
    const stubborn =
      'import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(10)';
    const ended = await sandbox.executeCell(stubborn, {
      conversation,
      timeoutMs: 1_000,
    });
    expect(ended.status).toBe('timeout');
    expect(ended.ended).toBe(
      'The Python interpreter ended with this cell (timeout): its variables, imports and files are gone. ' +
        'The next cell restores them by re-running 1 kept earlier cell first.',
    );
    const viaTool = await chatTurn(sandbox, conversation, 'import os\nos._exit(3)');
    expect(viaTool.output).toMatchObject({ state: 'failed', status: 'crashed' });
    expect(viaTool.modelText).toContain('The Python interpreter ended with this cell (crashed)');
  });
});

describeSandbox('conversation history under pressure: one interpreter per user', () => {
  let sandbox: DockerSandbox;
  suiteSandbox(
    {
      warmPoolSize: 0,
      preimport: [],
      conversations: { maxPerUser: 1, warmPoolSize: 0, maxQueuedCells: 1 },
    },
    created => {
      sandbox = created;
    },
  );

  it('the same user’s other conversation cannot evict an interpreter while it replays', async () => {
    const first = conversationOf('bea');
    await sandbox.executeCell('import time\ntime.sleep(3)\na = 1', {
      conversation: first,
      timeoutMs: 20_000,
    });
    await killInterpreters(sandbox);
    const restoring = sandbox.executeCell('print(a)', { conversation: first });
    // The restore's interpreter is up (its replay takes 3 s): now the user opens another chat.
    await vi.waitFor(async () => expect(await liveInterpreters(sandbox)).toHaveLength(1), {
      timeout: 30_000,
      interval: 50,
    });
    const other = await sandbox.executeCell('b = 1', { conversation: conversationOf('bea') }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(SandboxBusyError.isInstance(other), String(other)).toBe(true);
    expect(await restoring).toMatchObject({ status: 'success', stdout: '1\n' });
  }, 60_000);

  it('cells past maxQueuedCells are refused busy, the others run in order', async () => {
    const conversation = conversationOf('cid');
    const settled = await Promise.allSettled(
      [1, 2, 3, 4].map(n => sandbox.executeCell(`print(${n})`, { conversation })),
    );
    const ran = settled.filter(s => s.status === 'fulfilled') as Array<
      PromiseFulfilledResult<SandboxCellResult>
    >;
    expect(ran.map(s => s.value.stdout)).toEqual(['1\n', '2\n']);
    for (const refused of settled.slice(2)) {
      expect(refused.status).toBe('rejected');
      expect((refused as PromiseRejectedResult).reason).toMatchObject({
        resource: 'cells',
        limit: 1,
      });
    }
  });
});

describeSandbox('conversation history under pressure: a replay deadline', () => {
  let sandbox: DockerSandbox;
  suiteSandbox(
    { warmPoolSize: 0, preimport: [], conversations: { replayDeadlineMs: 1_000 } },
    created => {
      sandbox = created;
    },
  );

  it('starts no cell that could run past replayDeadlineMs, keeps it, and says what was not re-run', async () => {
    const conversation = conversationOf('dan');
    await sandbox.executeCell('a = 1', { conversation, timeoutMs: 600 });
    await sandbox.executeCell('import time\ntime.sleep(0.5)\nb = 2', {
      conversation,
      timeoutMs: 700,
    });
    await sandbox.executeCell('c = 3', { conversation, timeoutMs: 600 });
    await killInterpreters(sandbox);
    const after = await sandbox.executeCell('print(a, b)', { conversation });
    expect(after).toMatchObject({ status: 'success', stdout: '1 2\n' });
    expect(after.restored).toMatchObject({ cells: 2, notRerun: 1 });
    expect(after.restored?.summary).toContain('1 later cell was not re-run');
    // Still kept: a later restore tries it again.
    await killInterpreters(sandbox);
    const again = await sandbox.executeCell('print(a)', { conversation });
    // Cell 3 again, and cell 4 with its default limit: still kept, still not re-run.
    expect(again.restored).toMatchObject({ cells: 2, notRerun: 2 });
  });
});

describeSandbox('conversation history under pressure: two replicas', () => {
  it('one replica’s close() leaves the interpreter another replica serves; its own close removes it', async () => {
    const store = createStorage();
    const options = {
      image: SANDBOX_IMAGE,
      docker,
      warmPoolSize: 0,
      preimport: [],
      conversations: { store, encryptionKey: 'replica-test-key-0123456789abcdef', warmPoolSize: 0 },
    };
    const a = await DockerSandbox.create(options);
    const b = await DockerSandbox.create(options);
    try {
      const conversation = conversationOf('eli');
      await a.executeCell('import time\nstarted = time.time()', { conversation });
      const [interpreter] = await liveInterpreters(a);
      const fromB = await b.executeCell('print(started)', { conversation });
      expect(fromB.restored).toBeUndefined();
      await a.close();
      const after = await b.executeCell('print(started)', { conversation });
      expect(after.restored).toBeUndefined();
      expect(after.stdout).toBe(fromB.stdout);
      await b.close();
      const state = await docker
        .getContainer(interpreter!)
        .inspect()
        .then(info => info.State.Status)
        .catch(() => 'removed');
      expect(state).toBe('removed');
    } finally {
      await a.close();
      await b.close();
    }
    await expectNoLeakedContainers();
  }, 60_000);
});
