import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeSandbox } from '../sandbox/sandbox-availability.ts';

// As a user gets it: `npm pack`, then `npm install ./ai-toolbelt-x.tgz ai zod` in an empty app
// outside the repository, with no workspace links and no dev dependencies.
const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const version = async (name: string) =>
  (
    JSON.parse(await readFile(join(root, 'node_modules', name, 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;

describeSandbox('the packed package, installed in an app', () => {
  let app: string;

  beforeAll(async () => {
    app = await mkdtemp(join(tmpdir(), 'ai-toolbelt-app-'));
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', app], {
      cwd: root,
    });
    const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
    await writeFile(
      join(app, 'package.json'),
      JSON.stringify({ name: 'app', private: true, type: 'module' }),
    );
    await run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        `./${filename}`,
        `ai@${await version('ai')}`,
        `zod@${await version('zod')}`,
      ],
      { cwd: app },
    );
    await cp(join(import.meta.dirname, 'app-script.mjs'), join(app, 'app-script.mjs'));
  }, 300_000);
  afterAll(async () => {
    if (app) await rm(app, { recursive: true, force: true });
  });

  it('ships the built entry points, the set-up scripts and the license, and no sources or tests', async () => {
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json'], { cwd: root });
    const files = (JSON.parse(stdout) as [{ files: Array<{ path: string }> }])[0].files.map(
      f => f.path,
    );
    for (const needed of [
      'dist/index.js',
      'dist/mcp/index.js',
      'dist/sandbox/index.js',
      'dist/internal.js',
      'dist/cli.js',
    ])
      expect(files).toContain(needed);
    expect(files).toEqual(
      expect.arrayContaining([
        'scripts/setup-sandbox.sh',
        'scripts/add-python-packages.sh',
        'scripts/sandbox-image-lib.sh',
        'scripts/setup-sandbox-host.sh',
        'LICENSE',
        'README.md',
      ]),
    );
    expect(files.filter(f => f.startsWith('src/') || f.startsWith('test/'))).toEqual([]);
  });

  it('runs a first script: selection narrows the tools and python runs in the sandbox', async () => {
    const { stdout } = await run(process.execPath, ['app-script.mjs'], {
      cwd: app,
      timeout: 120_000,
    });
    expect(JSON.parse(stdout)).toEqual({
      offered: ['get_weather', 'python'],
      python: '42\n',
      text: 'done',
      mcp: 'function',
      internal: 'function',
    });
  }, 150_000);

  it('has a working `npx ai-toolbelt doctor`', async () => {
    const { stdout } = await run('npx', ['ai-toolbelt', 'doctor'], { cwd: app, timeout: 120_000 });
    expect(stdout).toContain('ok   run under gVisor');
    expect(stdout).not.toContain('FAIL');
  }, 150_000);
});
