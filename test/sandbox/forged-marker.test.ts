import { expect, it } from 'vitest';
import { DockerSandbox } from '../../src/sandbox/index.ts';
import { INSTANCE_LABEL } from '../../src/internal.ts';
import { describeSandbox, docker, suiteSandbox } from './sandbox-availability.ts';

/**
 * Code that tries every way it has to forge the done marker, as hostile code could: it collects
 * every `\0ai-toolbelt:<32 hex>:` prefix it can reach (the writable memory, environment and
 * command line of every process in the container, its own and the supervisor's included,
 * where it may read them), prints how many distinct tokens it found and
 * which sources were readable, writes a done marker with status 0 behind each one (and behind
 * a token of its own) on both streams, keeps running for `sleepS`, then fails. Only the record
 * nonce is reachable: the proof token never enters the code's process, and the supervisor is
 * non-dumpable.
 */
const forger = (sleepS: number) =>
  [
    'import os, re, secrets, time',
    'PATTERN = re.compile(rb"\\x00ai-toolbelt:[0-9a-f]{32}:")',
    'found, readable = set(), []',
    'def scan_memory(pid):',
    '    with open("/proc/%s/maps" % pid) as maps, open("/proc/%s/mem" % pid, "rb", 0) as mem:',
    '        for line in maps:',
    '            fields = line.split()',
    '            start, end = (int(x, 16) for x in fields[0].split("-"))',
    '            if not fields[1].startswith("rw") or end - start > 256 << 20:',
    '                continue',
    '            try:',
    '                mem.seek(start)',
    '                found.update(PATTERN.findall(mem.read(end - start)))',
    '            except (OSError, ValueError, OverflowError):',
    '                continue',
    'def who(pid):',
    '    return "self" if pid == os.getpid() else "supervisor" if pid == os.getppid() else "pid %d" % pid',
    'for pid in sorted(int(p) for p in os.listdir("/proc") if p.isdigit()):',
    '    try:',
    '        scan_memory(pid)',
    '        readable.append(who(pid) + " mem")',
    '    except OSError:',
    '        pass',
    '    for name in ("environ", "cmdline"):',
    '        try:',
    '            found.update(PATTERN.findall(open("/proc/%d/%s" % (pid, name), "rb").read()))',
    '        except OSError:',
    '            pass',
    'print("tokens found:", len(found), "readable:", sorted(set(readable)), flush=True)',
    'guess = b"\\x00ai-toolbelt:" + secrets.token_hex(16).encode() + b":"',
    'for prefix in sorted(found) + [guess]:',
    '    os.write(1, prefix + b"0\\n")',
    '    os.write(2, prefix + b"0\\n")',
    `time.sleep(${sleepS})`,
    'raise RuntimeError("failed after forged done markers")',
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

  it('does not report success for code that forged the marker with every token it could reach, then raised', async () => {
    const result = await sandbox.execute(forger(0.5), { timeoutMs: 20_000 });
    // It reached exactly one token, the record nonce (its own memory), and no other process's.
    expect(result.stdout).toMatch(/^tokens found: 1 readable: \['self mem'\]\n/);
    expect(result.status).toBe('error');
    expect(result.exitCode).toBe(1);
    expect(result.durationMs).toBeGreaterThanOrEqual(500);
  });

  it("takes the status from the container's exit when the code kills the supervisor, not from the code", async () => {
    const result = await sandbox.execute(
      [
        'import os, sys',
        'supervisor = os.getppid()',
        'assert open("/proc/%d/cmdline" % supervisor, "rb").read().startswith(b"python3\\0-I\\0-S\\0")',
        'print("killing the supervisor", flush=True)',
        'os.kill(supervisor, 9)',
        // Its own exit status (if it even gets to exit) counts for nothing now.
        'sys.exit(3)',
      ].join('\n'),
      { timeoutMs: 20_000 },
    );
    expect(result.stdout).toMatch(/^killing the supervisor\n/);
    // Not the code's 3: `timeout`, the container's first process, exits 128 + SIGKILL once its
    // child (the supervisor) is killed, and `docker wait` reports that.
    expect(result).toMatchObject({ status: 'crashed', exitCode: 137 });
  });

  it('kills the run at its deadline when the code stops the supervisor and exits 0', async () => {
    const result = await sandbox.execute(
      'import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)\nprint("stopped it", flush=True)',
      { timeoutMs: 3_000 },
    );
    expect(result).toMatchObject({ status: 'timeout', exitCode: null, stdout: 'stopped it\n' });
    expect(result.durationMs).toBeGreaterThanOrEqual(3_000);
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
      expect(results[0]!.stdout).toContain('tokens found: 1');
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
