import { generateText, stepCountIs, tool } from 'ai';
import { expect, it } from 'vitest';
import { z } from 'zod';
import {
  DockerSandbox,
  SandboxClosedError,
  SandboxFileError,
  type DockerSandboxSession,
} from '../../src/sandbox/index.ts';
import { scriptedModel } from '../helpers/scripted-model.ts';
import { describeSandbox, suiteSandbox } from './sandbox-availability.ts';

/** The rejection of `promise` (or undefined if it resolves). */
async function failure(promise: PromiseLike<unknown>): Promise<Error | undefined> {
  return Promise.resolve(promise).then(
    () => undefined,
    (error: Error) => error,
  );
}

async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

describeSandbox('DockerSandboxSession (Experimental_SandboxSession on gVisor)', () => {
  let sandbox: DockerSandbox;
  let session: DockerSandboxSession;

  suiteSandbox({ warmPoolSize: 0, preimport: [] }, async created => {
    sandbox = created;
    session = await created.createSession();
  });

  it('describes the environment for the agent', () => {
    expect(session.description).toContain('No network');
    expect(session.description).toContain('/tmp');
  });

  it('runs shell commands with exit code, stdout, stderr, env and working directory', async () => {
    const result = await session.run({
      command: 'echo "$GREETING from $(pwd) as $(id -u)"; echo oops >&2; exit 3',
      env: { GREETING: 'hello' },
    });
    expect(result).toEqual({
      exitCode: 3,
      stdout: 'hello from /tmp as 65534\n',
      stderr: 'oops\n',
      truncated: false,
      status: 'exited',
    });
  });

  it('keeps files for the session, relative to /tmp, and reads line ranges', async () => {
    await session.writeTextFile({ path: 'notes/a.txt', content: 'one\ntwo\nthree\n' });
    expect(await session.readTextFile({ path: '/tmp/notes/a.txt' })).toBe('one\ntwo\nthree\n');
    expect(await session.readTextFile({ path: 'notes/a.txt', startLine: 2, endLine: 2 })).toBe(
      'two\n',
    );
    expect(await session.stat({ path: 'notes/a.txt' })).toEqual({ type: 'file', size: 14 });
    expect(await session.stat({ path: 'notes' })).toMatchObject({ type: 'directory' });
    expect(await session.listDirectory({ path: 'notes' })).toEqual([
      { name: 'a.txt', type: 'file' },
    ]);
    const run = await session.run({
      command: 'python3 -c "print(open(\'a.txt\').read().split()[-1])"',
      workingDirectory: 'notes',
    });
    expect(run).toMatchObject({ exitCode: 0, stdout: 'three\n' });
    expect(await session.deleteFile({ path: 'notes/a.txt' })).toBe(true);
    expect(await session.deleteFile({ path: 'notes/a.txt' })).toBe(false);
    expect(await session.readTextFile({ path: 'notes/a.txt' })).toBeNull();
    expect(await session.stat({ path: 'missing' })).toBeNull();
    expect(await session.listDirectory({ path: 'missing' })).toBeNull();
  });

  it('round-trips binary files and streams', async () => {
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    await session.writeBinaryFile({ path: 'bin/all.bytes', content: bytes });
    expect(await session.readBinaryFile({ path: 'bin/all.bytes' })).toEqual(bytes);
    await session.writeFile({ path: 'bin/streamed', content: new Blob(['ab', 'cd']).stream() });
    const stream = await session.readFile({ path: 'bin/streamed' });
    expect(await text(stream!)).toBe('abcd');
  });

  it('rejects writes outside /tmp and reading a directory as a file', async () => {
    const outside = await failure(session.writeTextFile({ path: '/etc/evil', content: 'x' }));
    expect(SandboxFileError.isInstance(outside)).toBe(true);
    expect(outside!.message).toContain('Permission denied');
    const directory = await failure(session.readTextFile({ path: '/tmp' }));
    expect(SandboxFileError.isInstance(directory)).toBe(true);
    expect(directory!.message).toContain('is a directory');
  });

  it('spawns a process with stdin', async () => {
    const child = await session.spawn({ command: 'tr a-z A-Z', stdin: true });
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode('shout\n'));
    await writer.close();
    expect(await text(child.stdout)).toBe('SHOUT\n');
    expect(await child.wait()).toEqual({ exitCode: 0, status: 'exited' });
  });

  it('kills a spawned process tree, even right after spawning it', async () => {
    await session.writeTextFile({
      path: 'ps.py',
      content:
        'import os\nfor p in os.listdir("/proc"):\n    if p.isdigit():\n' +
        '        print(open(f"/proc/{p}/cmdline").read().replace("\\0", " "))\n',
    });
    const child = await session.spawn({ command: 'sleep 300 & sleep 301; echo never' });
    const output = text(child.stdout);
    await child.kill();
    const { exitCode } = await child.wait();
    expect(exitCode).not.toBe(0);
    expect(await output).toBe('');
    const { stdout } = await session.run({ command: 'python3 ps.py' });
    expect(stdout).toContain('sleep 3600s'); // the container's own init is listed...
    expect(stdout).not.toMatch(/sleep 30[01]/); // ...the killed tree is not, not even as zombies
  });

  it('stays up through many commands and kills (gVisor host threads stay under the pids limit)', async () => {
    for (let i = 0; i < 30; i++) {
      if (i % 3 === 0) {
        const child = await session.spawn({ command: 'sleep 60 & sleep 61' });
        await child.kill();
        await child.wait();
      } else {
        expect(await session.run({ command: `echo ${i}` })).toMatchObject({
          exitCode: 0,
          stdout: `${i}\n`,
        });
      }
    }
  }, 120_000);

  it('works as experimental_sandbox for AI SDK tools', async () => {
    const model = scriptedModel([
      { toolCalls: [{ name: 'shell', input: { command: 'python3 -c "print(6 * 7)"' } }] },
      { text: 'done' },
    ]);
    const result = await generateText({
      model,
      prompt: 'compute',
      experimental_sandbox: session,
      stopWhen: stepCountIs(3),
      tools: {
        shell: tool({
          inputSchema: z.object({ command: z.string() }),
          execute: async ({ command }, { experimental_sandbox }) =>
            (await experimental_sandbox!.run({ command })).stdout,
        }),
      },
    });
    const toolResult = result.steps[0]!.content.find(part => part.type === 'tool-result');
    expect(toolResult).toMatchObject({ output: '42\n' });
  });

  it('caps `yes` at the output limit, kills it, and keeps host memory bounded', async () => {
    const rssBefore = process.memoryUsage().rss;
    const result = await session.run({ command: 'yes' });
    expect(result.status).toBe('output-limit');
    expect(result.truncated).toBe(true);
    expect(result.stdout.length).toBe(1024 * 1024);
    expect(result.stdout.startsWith('y\ny\n')).toBe(true);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
    // The killed tree is gone: nothing named yes is left in the session.
    const { stdout } = await session.run({
      command: 'for p in /proc/[0-9]*; do cat $p/comm; done',
    });
    expect(stdout.split('\n')).not.toContain('yes');
  }, 60_000);

  it('caps a spawned process the same way', async () => {
    const child = await session.spawn({ command: 'yes' });
    let bytes = 0;
    for await (const chunk of child.stdout) bytes += chunk.length;
    expect(bytes).toBe(1024 * 1024);
    expect(await child.wait()).toMatchObject({ status: 'output-limit' });
  }, 60_000);

  it('reads only regular files, within maxFileBytes', async () => {
    const device = await failure(session.readBinaryFile({ path: '/dev/zero' }));
    expect(SandboxFileError.isInstance(device)).toBe(true);
    expect(device!.message).toContain('not a regular file');
    await session.run({ command: 'mkfifo pipe' });
    const fifo = await failure(session.readTextFile({ path: 'pipe' }));
    expect(fifo!.message).toContain('not a regular file');
    const small = await sandbox.createSession({ maxFileBytes: 1000 });
    try {
      await small.writeTextFile({ path: 'big.txt', content: 'x'.repeat(1001) });
      const big = await failure(small.readTextFile({ path: 'big.txt' }));
      expect(SandboxFileError.isInstance(big)).toBe(true);
      expect(big!.message).toContain('larger than the 1000-byte limit');
      await small.writeTextFile({ path: 'ok.txt', content: 'x'.repeat(1000) });
      expect(await small.readTextFile({ path: 'ok.txt' })).toHaveLength(1000);
    } finally {
      await small.close();
    }
  });

  it('refuses use after close', async () => {
    const local = await sandbox.createSession();
    await local.close();
    await expect(local.stat({ path: 'x' })).rejects.toSatisfy(SandboxClosedError.isInstance);
  });
});
