// Learned usage as channels of its own (`FusionOptions.learnedUsage`): N-channel confidence, the
// lexical index's field masks, and a hybrid index that learns into them.
import { describe, expect, it } from 'vitest';
import { createToolIndex } from '../../../src/retrieval/create-tool-index.ts';
import { LexicalIndex } from '../../../src/retrieval/lexical/lexical-index.ts';
import {
  type FusionOptions,
  fuseConfidence,
  fuseRankings,
} from '../../../src/retrieval/ranking/fusion.ts';
import { toolFields } from '../../../src/retrieval/tool-fields.ts';
import { hashingEmbeddingModel } from '../../helpers/hashing-embedding-model.ts';

describe('fuseConfidence', () => {
  const lexical = [
    { slot: 1, score: 0.5 },
    { slot: 2, score: 0.25 },
  ];
  const dense = [
    { slot: 3, score: 0.9 },
    { slot: 2, score: 0.8 },
    { slot: 1, score: 0.1 },
  ];

  it("is fuseRankings' confidence for the lexical and dense channels alone", () => {
    // fuseRankings takes raw BM25 and the full-match score: 10 / 20 = 0.5, 5 / 20 = 0.25.
    const raw = lexical.map(hit => ({ ...hit, score: hit.score * 20 }));
    const two = fuseRankings(raw, dense, { method: 'confidence' }, 20);
    const fused = fuseConfidence([lexical, dense]);
    expect(fused.map(hit => hit.slot)).toEqual(two.map(hit => hit.slot));
    fused.forEach((hit, i) => expect(hit.score).toBeCloseTo(two[i]!.score, 12));
  });

  it('weighs each channel by its best score; an empty channel weighs nothing', () => {
    const usage = [{ slot: 4, score: 0.6 }];
    const fused = fuseConfidence([lexical, dense, usage]);
    // shares 0.5 / 2, 0.9 / 2, 0.6 / 2: slot 2 (0.0625 + 0.36) leads slot 3 (0.405) and 4 (0.18)
    expect(fused.map(hit => hit.slot)).toEqual([2, 3, 4, 1]);
    expect(fused[0]!.score).toBeCloseTo(0.25 * 0.25 + 0.45 * 0.8, 12);
    expect(fuseConfidence([lexical, dense, []])).toEqual(fuseConfidence([lexical, dense]));
  });
});

describe('LexicalIndex fields', () => {
  const index = new LexicalIndex();
  index.set(0, toolFields({ name: 'get_weather', description: 'Current conditions' }));
  index.set(1, toolFields({ name: 'get_forecast', description: 'Forecast for the next days' }));
  index.setUsage(0, new Map([['rain', 1]]), 1);

  it("'text' leaves the usage field out, 'usage' scores it alone", () => {
    expect(index.search('rain', 5).map(hit => hit.slot)).toEqual([0]);
    expect(index.search('rain', 5, undefined, 'text')).toEqual([]);
    expect(index.search('rain forecast', 5, undefined, 'usage').map(hit => hit.slot)).toEqual([0]);
    // A full match of the usage field alone is scored at its weight (1), not the name's (3).
    expect(index.fullMatchScore('rain', 'usage')).toBeLessThan(index.fullMatchScore('rain'));
    expect(index.fullMatchScore('rain', 'text')).toBe(index.fullMatchScore('rain'));
  });
});

describe('learned usage as channels (hybrid)', () => {
  const catalog = [
    { name: 'get_weather', description: 'Current weather conditions for a city' },
    { name: 'get_forecast', description: 'Weather forecast for the next days' },
    { name: 'send_email', description: 'Send an email to a recipient' },
    { name: 'play_music', description: 'Play a song or a playlist' },
  ];
  type LearnedUsage = NonNullable<FusionOptions['learnedUsage']>;
  const build = (learnedUsage?: LearnedUsage, method: FusionOptions['method'] = 'confidence') =>
    createToolIndex({
      embeddingModel: hashingEmbeddingModel({ dimensions: 256 }),
      learning: true,
      fusion: { method, ...(learnedUsage ? { learnedUsage } : {}) },
    });
  const ranked = async (index: ReturnType<typeof build>, query: string) =>
    (await index.search(query, { topK: 4 })).map(hit => hit.name);

  it('ranks as mixed-in usage until something is learned', async () => {
    const mixed = build({ vector: 'mixed' });
    const split = build({ terms: 'channel' });
    await mixed.upsert(catalog);
    await split.upsert(catalog);
    for (const query of ['weather in Oslo', 'send a song by email', 'umbrella'])
      expect(await split.search(query, { topK: 4 })).toEqual(
        await mixed.search(query, { topK: 4 }),
      );
  });

  it('makes the mean request vector a channel by default', async () => {
    const byDefault = build();
    const explicit = build({ terms: 'field', vector: 'channel' });
    const mixed = build({ vector: 'mixed' });
    for (const index of [byDefault, explicit, mixed]) {
      await index.upsert(catalog);
      await index.learn({ query: 'do I need an umbrella tomorrow', tool: 'get_forecast' });
      await index.learn({ query: 'what to wear in the cold', tool: 'get_weather' });
    }
    for (const query of ['umbrella tomorrow', 'warm clothes for the cold', 'weather in Oslo'])
      expect(await byDefault.search(query, { topK: 4 })).toEqual(
        await explicit.search(query, { topK: 4 }),
      );
    // Mixed in, the same request scores otherwise: the dense vector is half description there.
    expect(await byDefault.search('umbrella tomorrow', { topK: 4 })).not.toEqual(
      await mixed.search('umbrella tomorrow', { topK: 4 }),
    );
  });

  for (const [learnedUsage, method] of [
    [{}, 'confidence'],
    [{ terms: 'channel' }, 'confidence'],
    [{ terms: 'none' }, 'confidence'],
    [{ vector: 'mixed' }, 'confidence'],
    [{}, 'zscore'],
    [{ terms: 'channel' }, 'zscore'],
    [{ vector: 'mixed' }, 'zscore'],
  ] satisfies [LearnedUsage, FusionOptions['method']][]) {
    it(`a learned request leads for a request like it (${JSON.stringify(learnedUsage)}, ${method})`, async () => {
      const index = build(learnedUsage, method);
      await index.upsert(catalog);
      await index.learn({ query: 'do I need an umbrella tomorrow', tool: 'get_forecast' });
      expect((await ranked(index, 'umbrella tomorrow'))[0]).toBe('get_forecast');
      await index.forget('get_forecast');
      // No word in common with any description: a cosine of 0, as before learning.
      const after = await index.search('umbrella tomorrow', { topK: 4 });
      expect(after.find(hit => hit.name === 'get_forecast')?.score).toBe(0);
    });
  }

  it('weighs one request less than many (evidence n / (n + 1)), and vectorWeight scales it', async () => {
    const score = async (requests: number, vectorWeight = 1) => {
      const index = createToolIndex({
        embeddingModel: hashingEmbeddingModel({ dimensions: 256 }),
        learning: { vectorWeight },
        fusion: { method: 'confidence', learnedUsage: { terms: 'none' } },
      });
      await index.upsert(catalog);
      for (let i = 0; i < requests; i++)
        await index.learn({ query: 'umbrella tomorrow', tool: 'get_forecast' });
      return (await index.search('umbrella tomorrow', { topK: 1 }))[0]!.score;
    };
    // The usage channel alone matches (cosine 1): its share is 1, its score the evidence.
    expect(await score(1)).toBeCloseTo(1 / 2, 6);
    expect(await score(3)).toBeCloseTo(3 / 4, 6);
    expect(await score(3, 0.5)).toBeCloseTo(3 / 8, 6);
  });

  it('zscore: a learned tool scores the better of its description and its requests', async () => {
    const plain = build(undefined, 'zscore');
    const learned = build(undefined, 'zscore');
    const mixed = build({ vector: 'mixed' }, 'zscore');
    for (const index of [plain, learned, mixed]) {
      await index.upsert(catalog);
      await index.learn({ query: 'play some jazz', tool: 'get_weather' });
    }
    await plain.forget('get_weather');
    // Its requests are unlike this query: its description's cosine stands, unchanged.
    const query = 'current weather conditions in Oslo';
    expect(await learned.search(query, { topK: 4 })).toEqual(
      await plain.search(query, { topK: 4 }),
    );
    // Mixed into the description vector, the same request dilutes it.
    expect(await mixed.search(query, { topK: 4 })).not.toEqual(
      await plain.search(query, { topK: 4 }),
    );
    // Like the query, its requests lead: jazz finds the weather tool.
    expect((await ranked(learned, 'jazz please'))[0]).toBe('get_weather');
  });
});
