import { expect, it } from 'vitest';
import { DockerSandbox } from '../../src/sandbox/index.ts';
import { INSTANCE_LABEL } from '../../src/internal.ts';
import { describeSandbox, docker, suiteSandbox } from './sandbox-availability.ts';

/**
 * Code that digs the run's record prefix (nonce included) out of its own memory, as hostile
 * code could, prints whether it found it, writes a done marker with status 0 behind it on both
 * streams, keeps running for `sleepS`, then fails. (The real done marker carries a token only
 * the supervisor process has; the code cannot find it in its own memory.)
 */
const forger = (sleepS: number) =>
  [
    'import ctypes, os, re, time',
    'found = None',
    'for line in open("/proc/self/maps"):',
    '    fields = line.split()',
    '    if not fields[1].startswith("rw"):',
    '        continue',
    '    start, end = (int(x, 16) for x in fields[0].split("-"))',
    '    if end - start > 256 << 20:',
    '        continue',
    '    m = re.search(rb"\\x00ai-toolbelt:([0-9a-f]{32}):", ctypes.string_at(start, end - start))',
    '    if m:',
    '        found = m.group(0)',
    '        break',
    'print("nonce found" if found else "nonce not found", flush=True)',
    'os.write(1, found + b"0\\n")',
    'os.write(2, found + b"0\\n")',
    `time.sleep(${sleepS})`,
    'raise RuntimeError("failed after a forged done marker")',
  ].join('\n');

describeSandbox('DockerSandbox: the done marker is a hint, never a proof', () => {
  let sandbox: DockerSandbox;

  suiteSandbox({ warmPoolSize: 0, maxConcurrentExecutions: 2, preimport: [] }, created => {
    sandbox = created;
  });

  it('keeps the nonce out of the frames, globals and gc-tracked objects the code can reach', async () => {
    const result = await sandbox.execute(
      'import re, sys\nf = sys._getframe()\nnames = []\nwhile f is not None:\n' +
        '    names += [k for k, v in {**f.f_globals, **f.f_locals}.items() if isinstance(v, bytes) and re.search(rb"\\x00ai-toolbelt:[0-9a-f]{32}:", v)]\n' +
        '    f = f.f_back\n' +
        'import gc\nfor o in gc.get_objects():\n' +
        '    values = o.values() if isinstance(o, dict) else o if isinstance(o, (list, tuple)) else ()\n' +
        '    names += [type(o).__name__ for v in values if isinstance(v, bytes) and re.search(rb"\\x00ai-toolbelt:[0-9a-f]{32}:", v)]\n' +
        'print(names)',
    );
    expect(result).toMatchObject({ status: 'success', stdout: '[]\n' });
  });

  it('cannot read or trace the supervisor that holds the proof token', async () => {
    const result = await sandbox.execute(
      [
        'import ctypes, os',
        'parent = os.getppid()',
        'try:',
        '    open("/proc/%d/mem" % parent, "rb").read(1)',
        '    print("mem readable")',
        'except OSError:',
        '    print("mem denied")',
        'libc = ctypes.CDLL(None, use_errno=True)',
        'print("ptrace denied" if libc.ptrace(16, parent, 0, 0) != 0 else "ptrace attached")',
        'print(open("/proc/%d/cmdline" % parent, "rb").read().split(b"\\0")[:3])',
      ].join('\n'),
    );
    expect(result.status).toBe('success');
    expect(result.stdout).toMatch(/^mem denied\nptrace denied\n\[b'python3', b'-I', b'-S'\]\n$/);
  });

  it('does not report success for code that forged the marker with the real nonce and then raised', async () => {
    const result = await sandbox.execute(forger(0.5), { timeoutMs: 20_000 });
    // The code really had the nonce: the forgery was a real one.
    expect(result.stdout).toContain('nonce found');
    expect(result.status).toBe('error');
    expect(result.exitCode).toBe(1);
    expect(result.durationMs).toBeGreaterThanOrEqual(500);
  });

  it('with 2 concurrent runs, 2 forging runs and a third never have 3 containers alive at once', async () => {
    const mine = { label: [`${INSTANCE_LABEL}=${sandbox.instanceId}`] };
    let most = 0;
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const containers = await docker.listContainers({ all: true, filters: mine });
        most = Math.max(most, containers.length);
        await new Promise(resolve => setTimeout(resolve, 25));
      }
    })();
    try {
      const results = await Promise.all([
        sandbox.execute(forger(2), { timeoutMs: 30_000 }),
        sandbox.execute(forger(2), { timeoutMs: 30_000 }),
        sandbox.execute('print("third")', { timeoutMs: 30_000 }),
      ]);
      expect(results.map(r => r.status)).toEqual(['error', 'error', 'success']);
      expect(results[0]!.stdout).toContain('nonce found');
      expect(results[2]!.stdout).toBe('third\n');
    } finally {
      polling = false;
      await poll;
    }
    expect(most).toBeGreaterThanOrEqual(1);
    expect(most).toBeLessThanOrEqual(2);
  }, 60_000);

  it("removes an aborted run's container before the abort settles", async () => {
    const controller = new AbortController();
    let host = '';
    const running = sandbox.execute(
      'import socket, time\nprint(socket.gethostname(), flush=True)\ntime.sleep(60)',
      {
        abortSignal: controller.signal,
        timeoutMs: 60_000,
        onOutput: ({ text }) => {
          host += text;
          if (host.includes('\n')) controller.abort(new Error('user stopped it'));
        },
      },
    );
    await expect(running).rejects.toThrow('user stopped it');
    const id = host.trim();
    expect(id).toMatch(/^[0-9a-f]{12}$/);
    // Checked right away, before any close() or waitForCleanup().
    await expect(docker.getContainer(id).inspect()).rejects.toMatchObject({ statusCode: 404 });
  });
});
