import { PNG } from 'pngjs';
import { expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/invalid-argument-error.ts';
import { DockerSandbox } from '../../src/sandbox/index.ts';
import { SANDBOX_IMAGE, describeSandbox, docker, suiteSandbox } from './sandbox-availability.ts';

const SALES_CSV =
  'region,product,amount\nnorth,tea,3\nsouth,tea,5\nnorth,cake,4\nsouth,cake,1\nnorth,tea,2\n';

/** Polls (no fixed sleep) until the sandbox has `count` warm containers done with their pre-imports. */
async function waitForWarm(sandbox: DockerSandbox, count: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (sandbox.warmReadyCount < count) {
    if (Date.now() > deadline) throw new Error('warm containers never finished their pre-imports');
    await new Promise(resolve => setTimeout(resolve, 50));
  }
}

describeSandbox('DockerSandbox under gVisor: the data stack, charts and files', () => {
  let sandbox: DockerSandbox;

  suiteSandbox({ warmPoolSize: 1 }, created => {
    sandbox = created;
  });

  it('lists the image packages and pre-imports pandas in a warm container', async () => {
    expect(sandbox.packages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^pandas==/),
        expect.stringMatching(/^numpy==/),
      ]),
    );
    await waitForWarm(sandbox, 1);
    const result = await sandbox.execute(
      'import sys\nprint(all(m in sys.modules for m in ("numpy", "pandas", "matplotlib.pyplot")))',
    );
    expect(result).toMatchObject({ status: 'success', stdout: 'True\n', stderr: '' });
  });

  it('answers a package the image lacks with a plain ModuleNotFoundError to repair from', async () => {
    const result = await sandbox.execute('import sklearn');
    expect(result.status).toBe('error');
    expect(result.stderr).toMatch(/ModuleNotFoundError: No module named 'sklearn'\n$/);
  });

  it('runs a pandas groupby on an input CSV and prints the right table', async () => {
    const result = await sandbox.execute(
      'import pandas as pd\n' +
        'df = pd.read_csv("inputs/sales.csv")\n' +
        'print(df.groupby("region")["amount"].sum().to_string())',
      { files: [{ path: 'inputs/sales.csv', data: SALES_CSV }], timeoutMs: 30_000 },
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('region\nnorth    9\nsouth    6\n');
    expect(result.images).toEqual([]);
  });

  it('returns a bar chart as a PNG that decodes to the size it reports', async () => {
    const result = await sandbox.execute(
      'import matplotlib.pyplot as plt\n' +
        'fig, ax = plt.subplots(figsize=(4, 3), dpi=100)\n' +
        'ax.bar(["north", "south"], [9, 6])\n' +
        'print("drawn")',
      { timeoutMs: 30_000 },
    );
    expect(result).toMatchObject({ status: 'success', stdout: 'drawn\n', notes: [] });
    expect(result.images).toHaveLength(1);
    const [image] = result.images;
    expect(image).toMatchObject({ name: 'figure-1.png', mediaType: 'image/png' });
    // Cropped to what was drawn (as a notebook shows it): about the 400x300 figure.
    expect(image!.width).toBeGreaterThan(340);
    expect(image!.width).toBeLessThan(440);
    expect(image!.height).toBeGreaterThan(250);
    expect(image!.height).toBeLessThan(330);
    const png = PNG.sync.read(Buffer.from(image!.data));
    expect([png.width, png.height]).toEqual([image!.width, image!.height]);
    // Not blank: the bars are drawn in matplotlib's default blue (#1f77b4).
    let blue = 0;
    for (let i = 0; i < png.data.length; i += 4) {
      if (png.data[i] === 0x1f && png.data[i + 1] === 0x77 && png.data[i + 2] === 0xb4) blue++;
    }
    expect(blue).toBeGreaterThan(1_000);
  });

  it('returns each figure shown with plt.show() separately, as a notebook does', async () => {
    const result = await sandbox.execute(
      'import matplotlib.pyplot as plt\n' +
        'for n in (1, 2, 3):\n' +
        '    plt.figure(figsize=(n, 1))\n' +
        '    plt.plot(range(n + 1))\n' +
        '    plt.show()\n' +
        'print(len(plt.get_fignums()))',
      { timeoutMs: 30_000 },
    );
    expect(result.stdout).toBe('0\n');
    expect(result.images.map(image => image.name)).toEqual([
      'figure-1.png',
      'figure-2.png',
      'figure-3.png',
    ]);
    // Figures 1, 2 and 3 inches wide, in the order they were shown.
    const widths = result.images.map(image => image.width);
    expect(widths[0]!).toBeLessThan(widths[1]!);
    expect(widths[1]!).toBeLessThan(widths[2]!);
  });

  it('caps 30 figures made in a loop at 10, with a note', async () => {
    const result = await sandbox.execute(
      'import matplotlib.pyplot as plt\nfor i in range(30):\n    plt.figure(figsize=(1, 1))\n    plt.plot([0, i])',
      { timeoutMs: 60_000 },
    );
    expect(result.status).toBe('success');
    expect(result.images).toHaveLength(10);
    expect(result.notes).toEqual(['30 figures were made; only the first 10 were returned']);
  });

  it('returns a CSV written to /tmp/outputs, round-tripping the input', async () => {
    const result = await sandbox.execute(
      'import pandas as pd\n' +
        'df = pd.read_csv("/tmp/inputs/sales.csv")\n' +
        'df.to_csv("/tmp/outputs/copy.csv", index=False)\n' +
        'open("/tmp/outputs/notes.txt", "w").write("ok")',
      {
        files: [{ path: '/tmp/inputs/sales.csv', data: new TextEncoder().encode(SALES_CSV) }],
        timeoutMs: 30_000,
      },
    );
    expect(result.status).toBe('success');
    expect(result.files.map(file => [file.path, file.mediaType])).toEqual([
      ['outputs/copy.csv', 'text/csv'],
      ['outputs/notes.txt', 'text/plain'],
    ]);
    expect(Buffer.from(result.files[0]!.data).toString('utf8')).toBe(SALES_CSV);
  });

  it('returns only regular files, and tells what the caps left out', async () => {
    const capped = await DockerSandbox.create({
      image: SANDBOX_IMAGE,
      docker,
      warmPoolSize: 0,
      preimport: [],
      maxOutputFiles: 2,
      maxArtifactBytes: 4_000,
    });
    try {
      const result = await capped.execute(
        'import os\n' +
          'os.symlink("/etc/passwd", "/tmp/outputs/1-link")\n' +
          'open("/tmp/outputs/0-big.bin", "wb").write(b"x" * 5000)\n' +
          'for name in "abc":\n' +
          '    open(f"/tmp/outputs/{name}.txt", "w").write(name)\n' +
          // A cold interpreter (no pre-imports): pyplot's own exit hook must not eat the figure.
          'import matplotlib.pyplot as plt\n' +
          'plt.figure(figsize=(2, 1))\nplt.plot([1, 2])',
      );
      expect(result.status).toBe('success');
      expect(result.files.map(file => file.path)).toEqual(['outputs/a.txt', 'outputs/b.txt']);
      expect(result.images).toHaveLength(1);
      expect(result.notes).toEqual([
        'outputs/0-big.bin (5000 bytes) was not returned: over the 4000-byte limit for returned images and files',
        'outputs/1-link was not returned: not a regular file',
        '5 files were written to /tmp/outputs; only the first 2 were returned',
      ]);
    } finally {
      await capped.close();
    }
  });

  it('rejects input files outside /tmp, duplicated, too many or too large with a typed error', async () => {
    const bad = async (files: unknown, argument: string) => {
      const error = await sandbox.execute('print(1)', { files: files as [] }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(InvalidArgumentError.isInstance(error)).toBe(true);
      expect((error as InvalidArgumentError).argument).toBe(argument);
    };
    await bad([{ path: '/etc/passwd', data: 'x' }], 'files[0].path');
    await bad([{ path: 'a/../../etc/x', data: 'x' }], 'files[0].path');
    await bad(
      [
        { path: 'a.csv', data: 'x' },
        { path: '/tmp/a.csv', data: 'y' },
      ],
      'files[1].path',
    );
    await bad([{ path: 'a.csv', data: 42 }], 'files[0].data');
    await bad(
      Array.from({ length: 101 }, (_, i) => ({ path: `f${i}`, data: '' })),
      'files',
    );
    await bad([{ path: 'big', data: new Uint8Array(17 * 1024 * 1024) }], 'files[0].data');
  });
});
