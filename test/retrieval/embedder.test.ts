import { describe, expect, it } from 'vitest';
import { createEmbedder } from '../../src/retrieval/embedder.ts';
import { hashingEmbeddingModel } from '../helpers/hashing-embedding-model.ts';

describe('embedder', () => {
  it('splits requests by the model limit and by a token budget (OpenAI caps a request at 300k tokens)', async () => {
    const model = hashingEmbeddingModel({ maxEmbeddingsPerCall: 3 });
    const embedder = createEmbedder({ model });
    const long = (word: string) => `${word} `.repeat(50_000); // 250,000 characters
    await embedder.embed([long('alpha'), long('bravo'), long('charlie'), 'a', 'b', 'c', 'd']);
    expect(model.doEmbedCalls.map(call => call.values.length)).toEqual([2, 3, 2]);
  });

  it('embeds each distinct text once, and cached texts not at all', async () => {
    const model = hashingEmbeddingModel();
    const embedder = createEmbedder({ model });
    const [a, b, again] = await embedder.embed(['alpha', 'bravo', 'alpha']);
    expect(again).toBe(a);
    expect(b).not.toBe(a);
    await embedder.embed(['bravo', 'charlie']);
    expect(model.doEmbedCalls.map(call => call.values)).toEqual([['alpha', 'bravo'], ['charlie']]);
  });

  it('keeps query text out of the shared store', async () => {
    const writes: boolean[] = [];
    const embedder = createEmbedder({
      model: hashingEmbeddingModel(),
      cache: {
        read: async ({ texts }) => texts.map(() => undefined),
        write: async ({ persist = true }) => void writes.push(persist),
      },
    });
    await embedder.embed(['a tool'], { purpose: 'tool' });
    await embedder.embed(['will it rain?'], { purpose: 'query' });
    expect(writes).toEqual([true, false]);
  });
});
