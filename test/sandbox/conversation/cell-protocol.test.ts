// The host's side of the interpreter protocol: the frame parser fed by hand (as a hostile
// kernel or a forged frame could write), and the supervisor and kernel themselves run with the
// host's python3 (no Docker needed): request framing, the secret, caps, the deadline.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type CellFrame,
  CellFrameParser,
  encodeCell,
  encodeHello,
} from '../../../src/sandbox/conversation/cell-protocol.ts';
import { pythonSource } from '../../../src/sandbox/in-container/python-source.ts';

const frame = (id: string, type: string, payload: string | Buffer = '') => {
  const body = Buffer.from(payload);
  return Buffer.concat([Buffer.from(`\0ATB1 ${id} ${type} ${body.length}\n`), body]);
};

function parse(
  chunks: Buffer[],
  allowRecord = (bytes: number) => bytes <= 100,
  { joinMidStream = false } = {},
) {
  const frames: CellFrame[] = [];
  const parser = new CellFrameParser({
    requestId: 'r1',
    joinMidStream,
    allowRecord,
    onFrame: f => frames.push(f),
  });
  let ok = true;
  for (const chunk of chunks) ok &&= parser.push(chunk);
  return { frames, ok, error: parser.error };
}

describe('CellFrameParser', () => {
  it('takes its own frames in any chunking and skips other requests without buffering them', () => {
    const stream = Buffer.concat([
      frame('other', 'out', 'x'.repeat(5000)),
      frame('r1', 'out', 'hello '),
      frame('r1', 'err', 'oops'),
      frame('r1', 'rec', 'note "n"\n'),
      frame('-', 'ready'),
      frame('r1', 'done', '{"exitCode":0}'),
    ]);
    for (const size of [1, 7, stream.length]) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < stream.length; i += size) chunks.push(stream.subarray(i, i + size));
      const { frames, ok } = parse(chunks);
      expect(ok).toBe(true);
      const text = (type: string) =>
        frames
          .filter(f => f.type === type)
          .map(f => (f as { data: Buffer }).data.toString())
          .join('');
      expect(text('out')).toBe('hello ');
      expect(text('err')).toBe('oops');
      expect(text('rec')).toBe('note "n"\n');
      expect(frames.at(-1)).toEqual({ type: 'done', outcome: { exitCode: 0 } });
      expect(frames.some(f => f.type === 'ready')).toBe(true);
    }
  });

  it('refuses a record over the budget before reading it, and bytes outside frames', () => {
    expect(parse([frame('r1', 'rec', 'x'.repeat(101))]).error).toBe('a record over the limits');
    expect(parse([Buffer.from('plain output\n')]).error).toBe('output outside a frame');
    expect(parse([frame('r1', 'done', '{"exitCode":999}')]).error).toBe('a malformed done frame');
    expect(parse([Buffer.from(`\0ATB1 r1 out ${'9'.repeat(200)}\n`)]).error).toBe(
      'a frame header is too long',
    );
    expect(parse([frame('r1', 'exec', 'x')]).error).toMatch(/unknown frame type/);
  });

  it('joining a running interpreter, skips the tail of a frame begun before the attach', () => {
    // Another replica's cell is printing: this attach sees its output from the middle on.
    const other = frame('other', 'out', 'y'.repeat(70_000));
    const stream = Buffer.concat([
      other.subarray(40_000),
      frame('r1', 'out', 'mine'),
      frame('r1', 'done', '{"exitCode":0}'),
    ]);
    for (const size of [1, 3, 4096, stream.length]) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < stream.length; i += size) chunks.push(stream.subarray(i, i + size));
      const { frames, ok } = parse(chunks, undefined, { joinMidStream: true });
      expect(ok).toBe(true);
      const out = frames.filter(f => f.type === 'out').map(f => (f as { data: Buffer }).data);
      expect(Buffer.concat(out).toString()).toBe('mine');
      expect(frames.filter(f => f.type !== 'out')).toEqual([
        { type: 'done', outcome: { exitCode: 0 } },
      ]);
    }
    // Without it (an interpreter attached before its start), such bytes break the protocol.
    expect(parse([other.subarray(40_000)]).error).toBe('a frame header is too long');
  });
});

/** Runs the supervisor and kernel on the host; sends requests, reads frames until a `done`. */
function hostInterpreter({ idleMs = 20_000 } = {}) {
  const child = spawn(
    'python3',
    [
      '-I',
      '-S',
      '-c',
      pythonSource('interpreter_supervisor'),
      pythonSource('interpreter_kernel'),
      '',
      String(idleMs),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let buffered = Buffer.alloc(0);
  const waiting: Array<() => void> = [];
  child.stdout.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (const wake of waiting.splice(0)) wake();
  });
  const exited = new Promise<number | null>(resolve => child.on('exit', resolve));
  const caps = { images: 2, files: 2, bytes: 1000, notes: 5, results: 0, records: 9 };
  return {
    exited,
    hello: (secret: string) => child.stdin.write(encodeHello(secret)),
    send(code: string, { secret }: { secret: string }) {
      const request = {
        code,
        files: [],
        caps,
        timeoutMs: 1000,
        maxOutputBytes: 1000,
        replay: false,
      };
      for (const chunk of encodeCell({ secret, requestId: 'x', request })) child.stdin.write(chunk);
    },
    async cell(
      code: string,
      { secret = 's', timeoutMs = 5_000, maxOutputBytes = 1000, id = `c${Math.random()}` } = {},
    ) {
      const request = {
        code,
        files: [],
        caps,
        timeoutMs,
        maxOutputBytes,
        replay: false,
      };
      for (const chunk of encodeCell({ secret, requestId: id, request })) child.stdin.write(chunk);
      const frames: CellFrame[] = [];
      const parser = new CellFrameParser({
        requestId: id,
        allowRecord: () => true,
        onFrame: f => frames.push(f),
      });
      for (;;) {
        const chunk = buffered;
        buffered = Buffer.alloc(0);
        parser.push(chunk);
        const done = frames.find(f => f.type === 'done');
        if (done !== undefined || child.exitCode !== null) {
          const text = (type: 'out' | 'err') =>
            frames
              .filter(f => f.type === type)
              .map(f => (f as { data: Buffer }).data.toString())
              .join('');
          const outcome = done && 'outcome' in done ? done.outcome : undefined;
          return { out: text('out'), err: text('err'), done: outcome };
        }
        await Promise.race([new Promise<void>(resolve => waiting.push(resolve)), exited]);
      }
    },
    stop: () => child.kill('SIGKILL'),
  };
}

describe('interpreter supervisor and kernel (host python3)', () => {
  it('keeps state between cells, serves only its secret, and stops a cell past its caps', async () => {
    const interpreter = hostInterpreter();
    try {
      interpreter.hello('s');
      expect(await interpreter.cell('x = 41\nprint("hi")')).toEqual({
        out: 'hi\n',
        err: '',
        done: { exitCode: 0 },
      });
      expect(await interpreter.cell('print(x + 1)')).toEqual({
        out: '42\n',
        err: '',
        done: { exitCode: 0 },
      });
      expect((await interpreter.cell('raise SystemExit(3)')).done).toEqual({ exitCode: 3 });
      // A request with another secret is dropped: nothing answers it, the next one is served.
      interpreter.send('print("never")', { secret: 'other' });
      expect(await interpreter.cell('print(x)')).toMatchObject({
        out: '41\n',
        done: { exitCode: 0 },
      });
      const loud = await interpreter.cell('print("y" * 5000)', { maxOutputBytes: 1000 });
      expect(loud.done).toEqual({ status: 'output-limit' });
      // Not 0, which the host reads as the idle expiry.
      expect(await interpreter.exited).toBe(70);
    } finally {
      interpreter.stop();
    }
  });

  it('interrupts a cell at its deadline: the kernel and its state live on', async () => {
    const interpreter = hostInterpreter();
    try {
      interpreter.hello('s');
      await interpreter.cell('kept = 3');
      const stuck = await interpreter.cell('while True: pass', { timeoutMs: 200 });
      expect(stuck.done).toEqual({ status: 'timeout', exitCode: 1, interrupted: true });
      expect(stuck.err).toContain('KeyboardInterrupt');
      expect((await interpreter.cell('print(kept)')).out).toBe('3\n');
    } finally {
      interpreter.stop();
    }
  });

  it('kills a cell that ignores the interrupt, a grace later, even with no host watching', async () => {
    const interpreter = hostInterpreter();
    try {
      interpreter.hello('s');
      const code = 'import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass';
      const stuck = await interpreter.cell(code, { timeoutMs: 200 });
      expect(stuck.done).toEqual({ status: 'timeout' });
      expect(await interpreter.exited).toBe(70);
    } finally {
      interpreter.stop();
    }
  });

  it('exits with 70, not the idle 0, when the kernel dies in a cell', async () => {
    const interpreter = hostInterpreter();
    try {
      interpreter.hello('s');
      const died = await interpreter.cell('import os\nos._exit(3)');
      expect(died.done).toEqual({ status: 'crashed', exitCode: 3 });
      expect(await interpreter.exited).toBe(70);
    } finally {
      interpreter.stop();
    }
  });

  it('exits when idle', async () => {
    const interpreter = hostInterpreter({ idleMs: 300 });
    try {
      interpreter.hello('s');
      expect((await interpreter.cell('pass')).done).toEqual({ exitCode: 0 });
      expect(await interpreter.exited).toBe(0);
    } finally {
      interpreter.stop();
    }
  });
});

describe('interpreter supervisor without protection', () => {
  it('fails closed: without a working prctl it starts no kernel and runs nothing', async () => {
    // A ctypes whose prctl fails, first on the module path (as a broken libc would behave).
    const dir = mkdtempSync(join(tmpdir(), 'no-prctl-'));
    writeFileSync(
      join(dir, 'ctypes.py'),
      'class CDLL:\n    def __init__(self, *a, **k): pass\n    def prctl(self, *a): return -1\ndef get_errno(): return 1\n',
    );
    try {
      const child = spawn(
        'python3',
        ['-S', '-c', pythonSource('interpreter_supervisor'), 'print("kernel ran")', '', '1000'],
        { env: { ...process.env, PYTHONPATH: dir }, stdio: ['pipe', 'pipe', 'pipe'] },
      );
      let stderr = '';
      let stdout = '';
      child.stderr.on('data', chunk => (stderr += chunk));
      child.stdout.on('data', chunk => (stdout += chunk));
      const code = await new Promise<number | null>(resolve => child.on('exit', resolve));
      expect(code).toBe(71);
      expect(stderr).toContain('could not make itself non-dumpable');
      // No kernel, so no ready frame (nor anything else) on stdout.
      expect(stdout).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
