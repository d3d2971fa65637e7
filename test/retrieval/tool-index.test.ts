import { MockEmbeddingModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { DuplicateToolError } from '../../src/errors/duplicate-tool-error.ts';
import { InvalidArgumentError } from '../../src/errors/invalid-argument-error.ts';
import { createToolIndex } from '../../src/retrieval/create-tool-index.ts';
import { embeddedCount, hashingEmbeddingModel } from '../helpers/hashing-embedding-model.ts';

const catalog = [
  { name: 'get_weather', description: 'Current weather conditions for a city', server: 'weather' },
  { name: 'get_forecast', description: 'Weather forecast for the next days', server: 'weather' },
  { name: 'send_email', description: 'Send an email to a recipient', server: 'mail' },
  { name: 'create_issue', description: 'Open an issue in a repository', server: 'github' },
  { name: 'list_files', description: 'List files in a directory', server: 'fs' },
];

describe('ToolIndex', () => {
  it('adds, updates and skips unchanged tools by content hash', async () => {
    const model = hashingEmbeddingModel();
    const index = createToolIndex({ embeddingModel: model });
    expect(await index.upsert(catalog)).toEqual({
      added: catalog.map(t => t.name),
      updated: [],
      unchanged: 0,
    });
    expect(embeddedCount(model)).toBe(5);

    const changed = catalog.map(t =>
      t.name === 'send_email' ? { ...t, description: 'Send mail' } : t,
    );
    expect(await index.upsert(changed)).toEqual({
      added: [],
      updated: ['send_email'],
      unchanged: 4,
    });
    expect(embeddedCount(model)).toBe(6); // only the changed tool was re-embedded
    expect(index.get('send_email')?.description).toBe('Send mail');
    expect(index.size).toBe(5);
  });

  it('removes tools and reuses their slots', async () => {
    const index = createToolIndex();
    await index.upsert(catalog);
    expect(index.remove(['get_weather', 'nope'])).toBe(1);
    expect(index.has('get_weather')).toBe(false);
    expect((await index.search('weather', { topK: 5 })).map(h => h.name)).toEqual(['get_forecast']);
    await index.upsert([{ name: 'rain_radar', description: 'Rain radar weather map' }]);
    expect(index.names()).toEqual([
      'get_forecast',
      'send_email',
      'create_issue',
      'list_files',
      'rain_radar',
    ]);
    expect((await index.search('weather', { topK: 5 })).map(h => h.name).sort()).toEqual([
      'get_forecast',
      'rain_radar',
    ]);
  });

  it('add() refuses names already indexed; upsert() refuses duplicates within a batch', async () => {
    const index = createToolIndex();
    await index.add(catalog);
    await expect(index.add([catalog[0]!])).rejects.toThrow(DuplicateToolError);
    await expect(index.upsert([catalog[0]!, { ...catalog[0]! }])).rejects.toThrow(
      /tools\[1\]\.name.*duplicates tools\[0\]\.name/,
    );
  });

  it('names the bad field of bad input', async () => {
    const index = createToolIndex();
    await expect(
      index.upsert([{ name: 'ok' }, { name: 'x', description: 42 } as never]),
    ).rejects.toThrow(/`tools\[1\]\.description`: expected a string, got number/);
    await expect(index.upsert([{ name: '' }])).rejects.toThrow(InvalidArgumentError);
    await expect(index.upsert([null as never])).rejects.toThrow(/`tools\[0\]`/);
    await expect(index.upsert('tools' as never)).rejects.toThrow(/`tools`: expected an array/);
    expect(index.size).toBe(0); // nothing half-applied
  });

  it('indexes tools without descriptions by name and schema', async () => {
    const index = createToolIndex();
    await index.upsert([
      {
        name: 'resize_image',
        inputSchema: { type: 'object', properties: { width: {}, height: {} } },
      },
      ...catalog,
    ]);
    expect((await index.search('resize to a new width', { topK: 1 }))[0]!.name).toBe(
      'resize_image',
    );
  });

  it('gives defined results for empty catalogs, empty queries and topK < 1', async () => {
    const index = createToolIndex();
    expect(await index.search('weather')).toEqual([]);
    await index.upsert(catalog);
    expect(await index.search('   ')).toEqual([]);
    expect(await index.search('weather', { topK: 0 })).toEqual([]);
    expect(await index.search('weather', { topK: -3 })).toEqual([]);
    await expect(index.search('weather', { topK: Number.NaN })).rejects.toThrow(/`topK`/);
    await expect(index.search(42 as never)).rejects.toThrow(/`query`: expected a string/);
  });

  it('filters by server or predicate', async () => {
    const index = createToolIndex();
    await index.upsert(catalog);
    const byServer = await index.search('send weather email', {
      topK: 5,
      filter: { servers: ['mail'] },
    });
    expect(byServer.map(h => h.name)).toEqual(['send_email']);
    expect(byServer[0]!.server).toBe('mail');
    const byPredicate = await index.search('weather', {
      topK: 5,
      filter: t => t.name.endsWith('forecast'),
    });
    expect(byPredicate.map(h => h.name)).toEqual(['get_forecast']);
    await expect(index.search('weather', { filter: { server: 'x' } as never })).rejects.toThrow(
      /`filter`/,
    );
  });

  it('fuses a dense channel with the lexical one (hybrid)', async () => {
    // A dense model that only knows "rain" is about weather: lexical alone misses it.
    const model = new MockEmbeddingModelV4({
      maxEmbeddingsPerCall: 100,
      doEmbed: async ({ values }) => ({
        embeddings: values.map(v => (/weather|rain/i.test(v) ? [1, 0.1] : [0.1, 1])),
        warnings: [],
      }),
    });
    const hybrid = createToolIndex({ embeddingModel: model });
    await hybrid.upsert(catalog);
    const lexical = createToolIndex();
    await lexical.upsert(catalog);
    expect(await lexical.search('will it rain', { topK: 2 })).toEqual([]);
    const hits = await hybrid.search('will it rain', { topK: 2 });
    expect(hits.map(h => h.name).sort()).toEqual(['get_forecast', 'get_weather']);
  });

  it('batches embeddings by maxEmbeddingsPerCall and caches them', async () => {
    const model = hashingEmbeddingModel({ maxEmbeddingsPerCall: 2 });
    const index = createToolIndex({ embeddingModel: model });
    await index.upsert(catalog);
    expect(model.doEmbedCalls.map(c => c.values.length)).toEqual([2, 2, 1]);
    await index.search('weather today', { topK: 2 });
    await index.search('weather today', { topK: 3 });
    expect(model.doEmbedCalls).toHaveLength(4); // the query was embedded once
  });

  it('leaves the index unchanged when embedding fails, and honours abortSignal', async () => {
    const failing = new MockEmbeddingModelV4({
      doEmbed: async () => {
        throw new Error('provider down');
      },
    });
    const index = createToolIndex({ embeddingModel: failing });
    await expect(index.upsert(catalog)).rejects.toThrow(/provider down/);
    expect(index.size).toBe(0);

    const slow = createToolIndex({ embeddingModel: hashingEmbeddingModel() });
    await expect(slow.upsert(catalog, { abortSignal: AbortSignal.abort() })).rejects.toThrow();
    expect(slow.size).toBe(0);
  });

  it('rejects NaN embeddings with a clear error', async () => {
    const model = new MockEmbeddingModelV4({
      doEmbed: async ({ values }) => ({
        embeddings: values.map(() => [Number.NaN, 1]),
        warnings: [],
      }),
    });
    const index = createToolIndex({ embeddingModel: model });
    await expect(index.upsert(catalog)).rejects.toThrow(/NaN/);
  });

  it('requires a model for dense retrieval', () => {
    expect(() => createToolIndex({ retrieval: 'dense' })).toThrow(/needs an embedding model/);
  });
});

describe('multi-need search', () => {
  // One busy server can crowd a small one out of the top-k: every GitHub tool
  // matches the first need, and the comment tool also matches "post".
  const verbs = ['create', 'list', 'get', 'update', 'close', 'lock', 'search'];
  const crowded = [
    ...verbs.map(verb => ({
      name: `github_${verb}_issue`,
      description: `${verb} an issue (title, labels, body) in a GitHub repository`,
      server: 'github',
    })),
    {
      name: 'github_add_comment',
      description: 'Post a comment on a GitHub issue in a repository',
      server: 'github',
    },
    {
      name: 'slack_post_message',
      description: 'Post a message to a Slack channel',
      server: 'slack',
    },
  ];
  const request =
    'Create a GitHub issue with a title and labels in the repository, then post a summary to the team';

  it('gives every need of a request a seat in the top-k', async () => {
    const index = createToolIndex();
    await index.upsert(crowded);
    const single = await index.search(request, { topK: 2, mode: 'single' });
    expect(single.map(h => h.name)).toEqual(['github_create_issue', 'github_add_comment']);
    const multi = await index.search(request, { topK: 2 }); // multi is the default
    expect(multi.map(h => h.name)).toEqual(['github_create_issue', 'slack_post_message']);
  });

  it('treats context fragments and single-need requests like single mode', async () => {
    const index = createToolIndex();
    await index.upsert(crowded);
    for (const query of [
      'Close the GitHub issue. My user id is 12345.',
      'Post a message to the Slack channel',
    ]) {
      expect(await index.search(query, { topK: 3, mode: 'multi' })).toEqual(
        await index.search(query, { topK: 3, mode: 'single' }),
      );
    }
  });
});
