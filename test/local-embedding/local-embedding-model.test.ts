// The local embedding model with the real models `fetch-model` installs (.ci/run fetches them):
// vectors as the models' own reference code makes them, batching, truncation, typed errors,
// and a tool index that finds tools by meaning where words do not match.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, cpSync, truncateSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { embed, embedMany } from 'ai';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalModelError } from '../../src/errors/local-model-error.ts';
import { localEmbeddingModel } from '../../src/local-embedding/local-embedding-model.ts';
import { createToolIndex } from '../../src/retrieval/create-tool-index.ts';
import { describeLocalModel, localModelPath } from '../helpers/local-model.ts';

const reference = JSON.parse(
  readFileSync(
    join(import.meta.dirname, '..', 'fixtures', 'local-embedding', 'reference-vectors.json'),
    'utf8',
  ),
) as Record<string, { texts: string[]; vectors: number[][] }>;

const run = promisify(execFile);

const cosine = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let dot = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(aa * bb);
};
const norm = (v: number[]) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));

for (const name of Object.keys(reference)) {
  describeLocalModel(`local model ${name}`, name, () => {
    const model = localEmbeddingModel({ model: name });
    afterAll(() => model.close());

    it('matches the vectors of the model’s reference code, to 1e-3 cosine', async () => {
      const { texts, vectors } = reference[name]!;
      const { embeddings } = await embedMany({ model, values: texts });
      embeddings.forEach((vector, i) => {
        expect(vector).toHaveLength(384);
        expect(Math.abs(norm(vector) - 1)).toBeLessThan(1e-5);
        expect(1 - cosine(vector, vectors[i]!)).toBeLessThan(1e-3);
      });
    });
  });
}

describeLocalModel('local model all-MiniLM-L6-v2 in use', 'all-MiniLM-L6-v2', () => {
  const model = localEmbeddingModel();
  afterAll(() => model.close());

  it('scores a paraphrase above an unrelated sentence', async () => {
    const {
      embeddings: [a, b, c],
    } = await embedMany({
      model,
      values: [
        'Get the weather forecast for a city',
        'Will it rain in Paris tomorrow?',
        'Delete a branch from the git repository',
      ],
    });
    expect(cosine(a!, b!)).toBeGreaterThan(cosine(a!, c!) + 0.2);
  });

  it('gives a batch the vectors it gives one text at a time', async () => {
    const texts = ['short', 'a somewhat longer sentence about sending email', 'x '.repeat(300)];
    const { embeddings } = await embedMany({ model, values: texts });
    for (const [i, text] of texts.entries()) {
      const { embedding } = await embed({ model, value: text });
      expect(1 - cosine(embedding, embeddings[i]!)).toBeLessThan(1e-6);
    }
  });

  it('cuts a long text at the model’s 256 tokens instead of refusing it', async () => {
    const head = 'Creates a pull request on GitHub from a branch. ';
    const long = head + 'filler words that go on and on '.repeat(400);
    const { embedding, usage } = await embed({ model, value: long });
    expect(usage.tokens).toBe(256);
    // Past the cut, nothing changes the vector.
    const { embedding: longer } = await embed({ model, value: long + 'and a different ending' });
    expect(1 - cosine(embedding, longer)).toBeLessThan(1e-6);
  });

  it('keeps the event loop free while it embeds a catalog', async () => {
    let ticks = 0;
    let ticking = true;
    const tick = () => {
      ticks++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    await embedMany({
      model,
      values: Array.from(
        { length: 64 },
        (_, i) => `tool ${i}: ${'reads and writes files '.repeat(20)}`,
      ),
    });
    ticking = false;
    // On the main thread ONNX Runtime's run is synchronous: the loop would turn once per batch.
    expect(ticks).toBeGreaterThan(100);
  });

  it('rejects a call whose signal aborts, and fails calls after close()', async () => {
    const controller = new AbortController();
    const call = embedMany({
      model,
      values: Array.from({ length: 200 }, (_, i) => `text ${i} ${'word '.repeat(100)}`),
      abortSignal: controller.signal,
      maxRetries: 0,
    });
    controller.abort(new Error('user left'));
    await expect(call).rejects.toThrow('user left');
    const other = localEmbeddingModel();
    await other.load();
    await other.close();
    const error = await other.doEmbed({ values: ['x'] }).catch(e => e);
    expect(LocalModelError.isInstance(error) && error.reason).toBe('closed');
  });

  it('keeps a process alive while it loads or embeds, and not once idle', async () => {
    // Top-level awaits only: the process must wait for the worker, then exit without close().
    const script = [
      `import { localEmbeddingModel } from ${JSON.stringify(join(import.meta.dirname, '../../src/local-embedding/index.ts'))};`,
      'const model = localEmbeddingModel();',
      'await model.load();',
      "const { embeddings } = await model.doEmbed({ values: ['weather in Paris'] });",
      'console.log(embeddings[0].length);',
    ].join('\n');
    const dir = mkdtempSync(join(tmpdir(), 'aitb-idle-'));
    try {
      writeFileSync(join(dir, 'idle.mjs'), script);
      const { stdout } = await run(process.execPath, [join(dir, 'idle.mjs')], { timeout: 30_000 });
      expect(stdout.trim()).toBe('384');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('picks tools by meaning where their words do not match the request', async () => {
    // Real MCP tool descriptions (GitHub, Slack, filesystem, a weather server, Google Calendar).
    const tools = [
      { name: 'get_forecast', description: 'Get weather forecast for a location.' },
      { name: 'create_issue', description: 'Create a new issue in a GitHub repository' },
      { name: 'slack_post_message', description: 'Post a new message to a Slack channel' },
      {
        name: 'read_file',
        description: 'Read the complete contents of a file from the file system.',
      },
      { name: 'create_event', description: 'Create a new event in Google Calendar' },
      { name: 'search_repositories', description: 'Search for GitHub repositories' },
    ];
    const requests = [
      ['Should I bring an umbrella to Seattle tomorrow?', 'get_forecast'],
      ['Let my coworkers in the chat know I am running late', 'slack_post_message'],
      ['Show me what is inside notes.txt', 'read_file'],
      ['Put a meeting with Anna on my agenda for Friday at 3pm', 'create_event'],
    ] as const;
    const lexical = createToolIndex();
    await lexical.upsert(tools);
    const hybrid = createToolIndex({ embeddingModel: model });
    await hybrid.upsert(tools);
    for (const [request, tool] of requests) {
      expect((await lexical.search(request, { topK: 1 }))[0]?.name).not.toBe(tool);
      expect((await hybrid.search(request, { topK: 1 }))[0]?.name, request).toBe(tool);
    }
  });
});

describe('local model folders', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'aitb-model-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('names the path and the fetch command when the folder is missing', () => {
    const error = (() => {
      try {
        localEmbeddingModel({ modelsDir: scratch });
      } catch (e) {
        return e;
      }
    })();
    expect(LocalModelError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      reason: 'missing',
      path: join(scratch, 'all-MiniLM-L6-v2'),
      command: `npx ai-toolbelt fetch-model all-MiniLM-L6-v2 --dir ${scratch}`,
    });
    expect((error as Error).message).toContain(join(scratch, 'all-MiniLM-L6-v2'));
    expect((error as Error).message).toContain('npx ai-toolbelt fetch-model all-MiniLM-L6-v2');
  });

  describeLocalModel('a damaged copy of all-MiniLM-L6-v2', 'all-MiniLM-L6-v2', () => {
    it('refuses a cut file, a missing tokenizer and a graph that is not one, naming each', async () => {
      const copy = (name: string) => {
        const to = join(scratch, name);
        cpSync(localModelPath('all-MiniLM-L6-v2'), to, { recursive: true });
        return to;
      };
      const cut = copy('cut');
      truncateSync(join(cut, 'model.safetensors'), 1000);
      expect(() => localEmbeddingModel({ path: cut })).toThrow(
        expect.objectContaining({ reason: 'corrupt', path: join(cut, 'model.safetensors') }),
      );
      const noTokenizer = copy('no-tokenizer');
      rmSync(join(noTokenizer, 'tokenizer.json'));
      expect(() => localEmbeddingModel({ path: noTokenizer })).toThrow(
        expect.objectContaining({ reason: 'missing', path: join(noTokenizer, 'tokenizer.json') }),
      );
      // A folder of one's own (no manifest) whose graph is garbage: found when it loads.
      const garbage = copy('garbage');
      rmSync(join(garbage, 'ai-toolbelt-model.json'));
      writeFileSync(join(garbage, 'model.onnx'), 'not a graph');
      writeFileSync(join(garbage, 'config.json'), JSON.stringify({ hidden_size: 384 }));
      const model = localEmbeddingModel({ path: garbage });
      const error = await model.load().catch(e => e);
      await model.close();
      expect(LocalModelError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ reason: 'corrupt', path: join(garbage, 'model.onnx') });
    });
  });
});
