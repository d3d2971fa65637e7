import { expect, it } from 'vitest';
import type { DockerSandbox } from '../../src/sandbox/index.ts';
import { recordFlood } from './record-flood.ts';
import { describeSandbox, suiteSandbox } from './sandbox-availability.ts';

/** Heap growth over `run`, with its result still held. */
async function heapGrowth<T>(run: () => Promise<T>): Promise<{ result: T; growth: number }> {
  const before = process.memoryUsage().heapUsed;
  const result = await run();
  return { result, growth: process.memoryUsage().heapUsed - before };
}

describeSandbox('DockerSandbox: records the code forges are capped on the host', () => {
  let sandbox: DockerSandbox;

  suiteSandbox({ warmPoolSize: 0, preimport: [] }, created => {
    sandbox = created;
  });

  it('stops a flood of 200,000 forged zero-byte files at maxOutputFiles, with host memory bounded', async () => {
    const { result, growth } = await heapGrowth(() =>
      sandbox.execute(recordFlood({ kind: 'file', count: 200_000 }), { timeoutMs: 60_000 }),
    );
    expect(result.stdout).toBe('exit hook: _done\n');
    expect(result.status).toBe('output-limit');
    expect(result.exitCode).toBeNull();
    expect(result.files.length).toBeLessThanOrEqual(20);
    expect(result.notes).toContain(
      'the run was stopped: it returned more than 20 files (maxOutputFiles)',
    );
    // Before the host counted records: 200,000 files and ~100 MiB of heap.
    expect(growth).toBeLessThan(24 * 1024 * 1024);
  }, 90_000);

  it('stops a flood of 24-byte fake PNGs at maxImages, with host memory bounded', async () => {
    const { result, growth } = await heapGrowth(() =>
      sandbox.execute(recordFlood({ kind: 'image', count: 340_000 }), { timeoutMs: 60_000 }),
    );
    expect(result.status).toBe('output-limit');
    expect(result.images.length).toBeLessThanOrEqual(10);
    expect(result.notes).toContain(
      'the run was stopped: it returned more than 10 images (maxImages)',
    );
    // Before: ~340,000 "images" under the 8 MiB byte cap, ~120 MiB of heap.
    expect(growth).toBeLessThan(24 * 1024 * 1024);
  }, 90_000);

  it('still returns a real run that fills every cap: 10 figures, 20 files, notes cut to 20', async () => {
    const result = await sandbox.execute(
      [
        'import os',
        'import matplotlib.pyplot as plt',
        'for i in range(12):',
        '    plt.figure(figsize=(1, 1))',
        'for i in range(25):',
        '    open("/tmp/outputs/f%02d.txt" % i, "w").write(str(i))',
        'for i in range(40):',
        '    os.symlink("/etc/passwd", "/tmp/outputs/a-link%02d" % i)',
      ].join('\n'),
      { timeoutMs: 30_000 },
    );
    expect(result.stderr).toBe('');
    expect(result.status).toBe('success');
    expect(result.images).toHaveLength(10);
    expect(result.files).toHaveLength(20);
    expect(result.notes).toHaveLength(20);
    expect(result.notes.at(-1)).toMatch(/^\d+ more notes were left out$/);
  }, 60_000);
});
