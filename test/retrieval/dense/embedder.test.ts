import { describe, expect, it } from 'vitest';
import { createEmbedder } from '../../../src/retrieval/dense/embedder.ts';
import type { EmbeddingCache } from '../../../src/retrieval/embedding-cache.ts';
import { hashingEmbeddingModel } from '../../helpers/hashing-embedding-model.ts';

// A cache that remembers no single vector: only the snapshot methods given can answer.
const snapshotOnly = (methods: Partial<EmbeddingCache>): EmbeddingCache => ({
  read: async ({ texts }) => texts.map(() => undefined),
  write: async () => {},
  ...methods,
});

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

  it('tells a model with prefixes what it embeds, and keys its vectors with the prefix', async () => {
    const model = Object.assign(hashingEmbeddingModel(), {
      queryPrefix: 'query: ',
      documentPrefix: 'passage: ',
    });
    const keys: string[] = [];
    const embedder = createEmbedder({
      model,
      cache: {
        read: async ({ texts }) => (keys.push(...texts), texts.map(() => undefined)),
        write: async () => {},
      },
    });
    await embedder.embed(['rain'], { purpose: 'query' });
    await embedder.embed(['rain']);
    expect(keys).toEqual(['query: rain', 'passage: rain']);
    expect(model.doEmbedCalls.map(call => [call.values, call.providerOptions])).toEqual([
      [['rain'], { [model.provider]: { inputType: 'query' } }],
      [['rain'], { [model.provider]: { inputType: 'document' } }],
    ]);
    // Other prefixes, another id: a snapshot or a learned vector of one is not the other's.
    const other = createEmbedder({
      model: Object.assign(hashingEmbeddingModel(), { queryPrefix: 'q: ' }),
    });
    expect(embedder.id).toMatch(/^mock-provider:hashing-test#/);
    expect(other.id).not.toBe(embedder.id);
    // A model without prefixes is called as before.
    const plain = hashingEmbeddingModel();
    await createEmbedder({ model: plain }).embed(['rain'], { purpose: 'query' });
    expect(plain.doEmbedCalls[0]!.providerOptions).toBeUndefined();
    expect(createEmbedder({ model: plain }).id).toBe('mock-provider:hashing-test');
  });

  it("treats a custom cache's snapshot as a miss unless it has one vector per text, all of one length", async () => {
    const texts = ['alpha', 'bravo', 'charlie'];
    const vector = (length: number) => new Float32Array(length).fill(1);
    for (const snapshot of [
      [vector(4), vector(4)], // a text short
      [vector(4), vector(4), vector(3)], // lengths differ
      [vector(4), undefined, vector(4)], // a hole
      'not an array',
    ]) {
      const model = hashingEmbeddingModel();
      const embedder = createEmbedder({
        model,
        cache: snapshotOnly({ readSnapshot: async () => snapshot as Float32Array[] }),
      });
      const { vectors, approximate } = await embedder.embedCatalog!(texts);
      expect(approximate).toBe(false);
      expect(vectors.map(v => v.length)).toEqual([64, 64, 64]);
      expect(model.doEmbedCalls.flatMap(call => call.values)).toEqual(texts);
    }
    const whole = createEmbedder({
      model: hashingEmbeddingModel(),
      cache: snapshotOnly({ readSnapshot: async () => texts.map(() => vector(4)) }),
    });
    expect(await whole.embedCatalog!(texts)).toMatchObject({ approximate: true });
  });

  it('finds a snapshot by its keys and builds the texts only when it must embed them', async () => {
    const keys = ['k1', 'k2', 'k3'];
    const built: number[] = [];
    const texts = () => {
      built.push(1);
      return ['alpha', 'bravo', 'charlie'];
    };
    const snapshots = new Map<string, Float32Array[]>();
    const model = hashingEmbeddingModel();
    const embedder = createEmbedder({
      model,
      cache: snapshotOnly({
        readSnapshot: async ({ keys }) => snapshots.get(keys.join()),
        writeSnapshot: async ({ keys, vectors }) => void snapshots.set(keys.join(), [...vectors]),
      }),
    });
    expect(await embedder.embedCatalog!({ keys, texts })).toMatchObject({ approximate: false });
    expect(built).toHaveLength(1);
    expect([...snapshots.keys()]).toEqual(['k1,k2,k3']);
    expect(await embedder.embedCatalog!({ keys, texts })).toMatchObject({ approximate: true });
    expect(built).toHaveLength(1);
    expect(model.doEmbedCalls).toHaveLength(1);
    // A texts function that does not match its keys is refused before anything is embedded.
    await expect(
      embedder.embedCatalog!({ keys: ['k4'], texts: () => ['delta', 'echo'] }),
    ).rejects.toThrow(/catalog\.texts.*one text per key/);
    expect(model.doEmbedCalls).toHaveLength(1);
  });
});
