import { expect, it } from 'vitest';
import { DockerSandbox, type SandboxOutputChunk } from '../../src/sandbox/index.ts';
import { describeSandbox, docker, suiteSandbox } from './sandbox-availability.ts';

describeSandbox('DockerSandbox under gVisor: results', () => {
  let sandbox: DockerSandbox;

  suiteSandbox({ warmPoolSize: 2, preimport: [] }, async created => {
    sandbox = created;
    expect(created.runtime).toBe('runsc');
  });

  it('runs code and returns stdout', async () => {
    const result = await sandbox.execute('print(sum(range(10)))\nprint("é", end="")');
    expect(result).toMatchObject({
      status: 'success',
      exitCode: 0,
      stdout: '45\né',
      stderr: '',
      truncated: false,
    });
    expect(result.durationMs).toBeGreaterThan(0);
  });

  it('reports stderr and a non-zero exit as an error result', async () => {
    const result = await sandbox.execute(
      'import sys\nprint("partial")\nprint("bad input", file=sys.stderr)\nsys.exit(3)',
    );
    expect(result).toMatchObject({
      status: 'error',
      exitCode: 3,
      stdout: 'partial\n',
      stderr: 'bad input\n',
    });
  });

  it('reports a traceback with the code line for an exception', async () => {
    const result = await sandbox.execute('def f():\n    return 1 / 0\nf()');
    expect(result.status).toBe('error');
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('File "<sandbox>", line 2, in f');
    expect(result.stderr).toContain('return 1 / 0');
    expect(result.stderr).toMatch(/ZeroDivisionError: division by zero\n$/);
    expect(result.stderr).not.toContain('exec(');
  });

  it('reports a syntax error', async () => {
    const result = await sandbox.execute('print("unclosed"');
    expect(result.status).toBe('error');
    expect(result.stderr).toContain('SyntaxError');
    expect(result.stderr).toContain('line 1');
  });

  it('classifies an exit without the done marker from the real exit code', async () => {
    const result = await sandbox.execute('import os\nprint("bye", flush=True)\nos._exit(4)');
    expect(result).toMatchObject({ status: 'error', exitCode: 4, stdout: 'bye\n' });
  });

  it('runs the code as a real __main__: pickle, atexit hooks and threads finish first', async () => {
    const result = await sandbox.execute(
      'import atexit, pickle, threading, time\n' +
        'class Point:\n    x = 7\n' +
        'print(pickle.loads(pickle.dumps(Point())).x, __name__, "_nonce" in globals())\n' +
        'atexit.register(lambda: print("atexit hook"))\n' +
        'def late():\n    time.sleep(0.2)\n    print("thread done")\n' +
        'threading.Thread(target=late).start()',
    );
    expect(result).toMatchObject({
      status: 'success',
      stdout: '7 __main__ False\nthread done\natexit hook\n',
    });
  });

  it('gives the code an empty stdin and runs it in /tmp as nobody (65534) without capabilities', async () => {
    const result = await sandbox.execute(
      'import os, sys\nprint(repr(sys.stdin.read()), os.getuid(), os.getgid(), os.getcwd())\n' +
        'print(open("/proc/self/status").read().split("CapEff:")[1].split()[0])',
    );
    expect(result.stdout).toBe("'' 65534 65534 /tmp\n0000000000000000\n");
  });

  it('streams output through onOutput while the code runs', async () => {
    const chunks: SandboxOutputChunk[] = [];
    const result = await sandbox.execute(
      'import sys\nprint("one")\nprint("two", file=sys.stderr)\nprint("three")',
      { onOutput: chunk => chunks.push(chunk) },
    );
    const text = (stream: string) =>
      chunks
        .filter(c => c.stream === stream)
        .map(c => c.text)
        .join('');
    expect(text('stdout')).toBe('one\nthree\n');
    expect(text('stderr')).toBe('two\n');
    expect(result.stdout).toBe('one\nthree\n');
    // The done marker is never shown to the caller.
    expect(chunks.some(c => c.text.includes('\0'))).toBe(false);
  });

  it('does not lose large output to runsc short writes', async () => {
    const result = await sandbox.execute(
      'import sys\nsys.stdout.write("y" * 300_000)\nprint()\nprint("end")',
    );
    expect(result.status).toBe('success');
    expect(result.stdout).toBe(`${'y'.repeat(300_000)}\nend\n`);
  });

  // The kill at the timeout is checked with the hostile-code suite (hostile-code-suite.ts).

  it('rejects with the abort reason once the run is killed and its container gone', async () => {
    const controller = new AbortController();
    let host = '';
    const running = sandbox.execute(
      'import socket, time\nprint(socket.gethostname(), flush=True)\ntime.sleep(60)',
      {
        abortSignal: controller.signal,
        onOutput: ({ text }) => {
          host += text;
          if (host.includes('\n')) controller.abort(new Error('user stopped it'));
        },
      },
    );
    await expect(running).rejects.toThrow('user stopped it');
    // Before any close(): the abort settles only once the container is removed.
    expect(host.trim()).toMatch(/^[0-9a-f]{12}$/);
    await expect(docker.getContainer(host.trim()).inspect()).rejects.toMatchObject({
      statusCode: 404,
    });
  });
});
