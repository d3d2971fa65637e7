// The Python that runs inside every container, checked without Docker: every program compiles
// and passes pyflakes, and the one-shot bootstrap under its supervisor, run by the host's python3
// in a private /tmp (a mount namespace), frames its records as the host's parser reads them and
// keeps to the caps it is given.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createNonce,
  encodeRunInput,
  markerPrefix,
  READY_MARKER,
} from '../../../src/sandbox/in-container/bootstrap.ts';
import { OutputCollector } from '../../../src/sandbox/output/output-collector.ts';
import { pythonSource } from '../../../src/sandbox/in-container/python-source.ts';
import { resolveRecordCaps } from '../../../src/sandbox/output/record-budget.ts';

const dir = join(import.meta.dirname, '..', '..', '..', 'src', 'sandbox', 'in-container');
const programs = readdirSync(dir).filter(name => name.endsWith('.py'));
const PYFLAKES = '/usr/bin/pyflakes3';

describe('in-container Python programs', () => {
  it('are all there, and compile', () => {
    expect(programs.sort()).toEqual([
      'artifacts.py',
      'charts.py',
      'display.py',
      'egress.py',
      'egress_forwarder.py',
      'interpreter_kernel.py',
      'interpreter_supervisor.py',
      'run_bootstrap.py',
      'run_supervisor.py',
    ]);
    // compile() without writing __pycache__ next to the sources.
    for (const program of programs) {
      const check = 'import sys; compile(open(sys.argv[1]).read(), sys.argv[1], "exec")';
      execFileSync('python3', ['-c', check, join(dir, program)]);
    }
  });

  it('pass pyflakes (Debian python3-pyflakes; .ci/run installs it)', () => {
    if (!existsSync(PYFLAKES)) {
      if (process.env.CI)
        throw new Error(`${PYFLAKES} is missing: apt-get install python3-pyflakes`);
      console.log(
        '[pyflakes skipped] apt-get install python3-pyflakes to lint the Python programs',
      );
      return;
    }
    const run = () =>
      execFileSync(
        PYFLAKES,
        programs.map(program => join(dir, program)),
      );
    expect(() => run()).not.toThrow();
  });
});

const isRoot = process.getuid?.() === 0;

/**
 * Runs `code` one-shot on the host: supervisor + bootstrap in their own PID namespace (the
 * supervisor ends by SIGKILLing every process it can see, as in a container: on the host, as
 * root, that would be every process of the machine) with a private tmpfs at /tmp.
 */
async function runOnHost(
  code: string,
  caps = { images: 2, files: 3, bytes: 1 << 20 },
  env: Record<string, string> = {},
) {
  const proof = createNonce();
  const nonce = createNonce();
  const resolved = resolveRecordCaps(caps);
  const child = spawn(
    'unshare',
    [
      ...['--pid', '--fork', '--mount-proc', '--mount', '--propagation', 'private'],
      ...['sh', '-c'],
      'mount -t tmpfs tmpfs /tmp && exec python3 -I -S -c "$0" "$1" ""',
      pythonSource('run_supervisor'),
      pythonSource('run_bootstrap'),
    ],
    // From /: the checkout may live under /tmp, which the private tmpfs hides (a pyenv shim
    // for python3 then fails to enter its working directory).
    { stdio: ['pipe', 'pipe', 'pipe'], cwd: '/', env: { ...process.env, ...env } },
  );
  let status: number | undefined;
  let limited = false;
  const collector = new OutputCollector({
    marker: markerPrefix(nonce),
    proof: markerPrefix(proof),
    maxBytes: 1 << 20,
    caps: resolved,
    onLimit: () => (limited = true),
    onMarkers: exitStatus => (status = exitStatus),
  });
  child.stdout.on('data', (chunk: Buffer) => collector.push('stdout', chunk));
  child.stderr.on('data', (chunk: Buffer) => collector.push('stderr', chunk));
  for (const chunk of encodeRunInput({ proof, nonce, code, files: [], caps: resolved })) {
    child.stdin.write(chunk);
  }
  child.stdin.end();
  const exitCode = await new Promise<number | null>(resolve => child.on('exit', resolve));
  collector.flush();
  return { exitCode, status, limited, ...collector.result() };
}

// Needs root for its namespaces: skipped on a developer's machine, run (and failing) in CI.
(isRoot || process.env.CI ? describe : describe.skip)(
  'one-shot bootstrap on the host python3 (root: a private /tmp)',
  () => {
    it('returns files from /tmp/outputs as records the host parses, and the real status', async () => {
      const run = await runOnHost(
        'import os\nos.makedirs("/tmp/outputs/sub")\nopen("/tmp/outputs/a.csv", "w").write("x,y\\n1,2\\n")\nopen("/tmp/outputs/sub/b.txt", "w").write("b")\nprint("hi")\nraise SystemExit(3)',
      );
      expect(run.status).toBe(3);
      expect(run.exitCode).toBe(3);
      expect(run.stdout).toBe('hi\n');
      expect(
        run.files.map(file => [file.path, file.mediaType, Buffer.from(file.data).toString()]),
      ).toEqual([
        ['outputs/a.csv', 'text/csv', 'x,y\n1,2\n'],
        ['outputs/sub/b.txt', 'text/plain', 'b'],
      ]);
      expect(run.limited).toBe(false);
    });

    it('keeps to the caps it is given: files past maxOutputFiles and bytes past the budget become notes', async () => {
      const run = await runOnHost(
        'import os\nfor i in range(6):\n    open("/tmp/outputs/f%d.txt" % i, "w").write("x" * 10)\nopen("/tmp/outputs/big.bin", "wb").write(b"0" * 5000)',
        { images: 1, files: 3, bytes: 1000 },
      );
      expect(run.status).toBe(0);
      expect(run.files).toHaveLength(3);
      expect(run.notes.join('\n')).toMatch(/big\.bin \(5000 bytes\) was not returned/);
      expect(run.notes.join('\n')).toMatch(
        /7 files were written to \/tmp\/outputs; only the first 3 were returned/,
      );
      expect(run.limited).toBe(false);
    });

    describe('with an egress policy (AI_TOOLBELT_EGRESS_*, as the host sets them)', () => {
      // The proxy's stand-in: a Unix socket outside /tmp (the run has a private /tmp) that
      // echoes and says how many bytes it got when the client half-closes.
      let socketDir: string;
      let proxy: Server;
      const egressEnv = (port: number): Record<string, string> => ({
        HOME: '/tmp',
        AI_TOOLBELT_EGRESS_SOCKET: join(socketDir, 'proxy.sock'),
        AI_TOOLBELT_EGRESS_PORT: String(port),
        AI_TOOLBELT_EGRESS_FORWARDER: pythonSource('egress_forwarder'),
        HTTP_PROXY: `http://127.0.0.1:${port}`,
      });
      // The ready marker is the host's to strip (sandbox-container.ts), not the collector's.
      const stderrOf = (run: { stderr: string }) =>
        run.stderr.replace(READY_MARKER.toString('latin1'), '');
      const freePort = async () => {
        const probe = createServer();
        await new Promise<void>(resolve => probe.listen(0, '127.0.0.1', resolve));
        const { port } = probe.address() as AddressInfo;
        await new Promise(resolve => probe.close(resolve));
        return port;
      };

      beforeAll(async () => {
        socketDir = mkdtempSync('/var/tmp/atb-egress-');
        proxy = createServer({ allowHalfOpen: true }, socket => {
          let bytes = 0;
          socket.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            socket.write(chunk);
          });
          socket.on('end', () => socket.end(`END ${bytes}`));
          socket.on('error', () => {});
        });
        await new Promise<void>(resolve => proxy.listen(join(socketDir, 'proxy.sock'), resolve));
      });

      afterAll(async () => {
        await new Promise(resolve => proxy?.close(resolve));
        rmSync(socketDir, { recursive: true, force: true });
      });

      it('the code reaches the proxy through 127.0.0.1:PORT, imports from the user site, and never sees the forwarder source', async () => {
        const port = await freePort();
        const run = await runOnHost(
          [
            'import os, site, socket, sys',
            'print("AI_TOOLBELT_EGRESS_FORWARDER" in os.environ, os.environ["HTTP_PROXY"].startswith("http://127.0.0.1:"))',
            'print(site.getusersitepackages(), site.getusersitepackages() in sys.path)',
            's = socket.create_connection(("127.0.0.1", int(os.environ["AI_TOOLBELT_EGRESS_PORT"])))',
            's.sendall(b"hello" * 1000)',
            's.shutdown(socket.SHUT_WR)',
            'data = b""',
            'while True:',
            '    chunk = s.recv(65536)',
            '    if not chunk: break',
            '    data += chunk',
            'print(data == b"hello" * 1000 + b"END 5000")',
          ].join('\n'),
          undefined,
          egressEnv(port),
        );
        expect(stderrOf(run)).toBe('');
        const version = execFileSync('python3', [
          '-c',
          'import sys; print("%d.%d" % sys.version_info[:2])',
        ])
          .toString()
          .trim();
        expect(run.stdout).toBe(
          `False True\n/tmp/.local/lib/python${version}/site-packages True\nTrue\n`,
        );
        expect(run.status).toBe(0);
      });

      it('when the port cannot be bound the code still runs, and stderr says why', async () => {
        const port = await freePort();
        const taken = createServer();
        await new Promise<void>(resolve => taken.listen(port, '127.0.0.1', resolve));
        try {
          const run = await runOnHost('print("ran")', undefined, egressEnv(port));
          expect(run.stdout).toBe('ran\n');
          expect(run.status).toBe(0);
          expect(stderrOf(run)).toMatch(
            /^ai-toolbelt sandbox: the network is unreachable: the egress forwarder could not be started \(OSError: .*in use.*\)\n$/,
          );
        } finally {
          await new Promise(resolve => taken.close(resolve));
        }
      });
    });
  },
);
