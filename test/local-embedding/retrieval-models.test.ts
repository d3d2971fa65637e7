// The 12-layer retrieval models from Maven Central (.ci/run fetches them): their vectors against
// reference values computed independently, and their query and document prefixes reaching the
// model and the embedding cache's keys.
import { embed } from 'ai';
import { afterAll, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/invalid-argument-error.ts';
import { localEmbeddingModel } from '../../src/local-embedding/local-embedding-model.ts';
import { createEmbeddingCache, type EmbeddingCache } from '../../src/retrieval/embedding-cache.ts';
import { createEmbedder } from '../../src/retrieval/dense/embedder.ts';
import { createToolIndex } from '../../src/retrieval/create-tool-index.ts';
import { describeLocalModel } from '../helpers/local-model.ts';

const QUERY = 'Will it rain in Paris tomorrow?';
const DOCUMENT = 'get_forecast: Get weather forecast for a location.';

// From Python onnxruntime 1.32.0 and tokenizers 0.23.3 on the ONNX files taken straight out of
// the jars (not through ai-toolbelt), pooled and normalised by hand, each prefix put on by hand:
// the research workspace's reference/prefixed_vectors.py. The first 8 values of each vector,
// the tokens it took ([CLS], [SEP] and the prefix included), and the two vectors' cosine.
const REFERENCE = {
  'bge-small-en-v1.5-int8': {
    queryPrefix: 'Represent this sentence for searching relevant passages: ',
    documentPrefix: '',
    query: [-0.033871, -0.0573, 0.03082, 0.034835, 0.058514, 0.021128, 0.016827, 0.003457],
    queryTokens: 17,
    document: [0.028676, -0.047704, 0.050182, 0.043158, 0.091027, -0.012888, 0.010313, 0.02925],
    documentTokens: 13,
    cosine: 0.60768,
  },
  'e5-small-v2-int8': {
    queryPrefix: 'query: ',
    documentPrefix: 'passage: ',
    query: [-0.074208, 0.044893, 0.042722, -0.016451, -0.018602, 0.018668, 0.055655, -0.086651],
    queryTokens: 11,
    document: [-0.053104, 0.024123, 0.054094, 0.019146, 0.003893, 0.053472, 0.066216, -0.075894],
    documentTokens: 15,
    cosine: 0.775877,
  },
} as const;

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
};
const asQuery = { local: { inputType: 'query' } };

for (const [name, reference] of Object.entries(REFERENCE)) {
  describeLocalModel(`local model ${name}`, name, () => {
    const model = localEmbeddingModel({ model: name });
    afterAll(() => model.close());

    it('gives the reference vectors, a query with its prefix and a tool with its own', async () => {
      expect([model.queryPrefix, model.documentPrefix]).toEqual([
        reference.queryPrefix,
        reference.documentPrefix,
      ]);
      const query = await model.doEmbed({ values: [QUERY], providerOptions: asQuery });
      const document = await model.doEmbed({ values: [DOCUMENT] });
      for (const [result, values, tokens] of [
        [query, reference.query, reference.queryTokens],
        [document, reference.document, reference.documentTokens],
      ] as const) {
        const vector = result.embeddings[0]!;
        expect(vector).toHaveLength(384);
        expect(Math.abs(dot(vector, vector) - 1)).toBeLessThan(1e-5);
        vector.slice(0, 8).forEach((value, i) => expect(value).toBeCloseTo(values[i]!, 4));
        expect(result.usage?.tokens).toBe(tokens);
      }
      expect(dot(query.embeddings[0]!, document.embeddings[0]!)).toBeCloseTo(reference.cosine, 3);
    });

    it('refuses an input type it does not know, naming the option', async () => {
      const error = await model
        .doEmbed({ values: [QUERY], providerOptions: { local: { inputType: 'passage' } } })
        .catch((e: unknown) => e);
      expect(InvalidArgumentError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain('providerOptions.local.inputType');
    });

    it('keys cached vectors on the text as embedded, prefix included', async () => {
      const memory = createEmbeddingCache();
      const keys: string[] = [];
      const cache: EmbeddingCache = {
        read: request => (keys.push(...request.texts), memory.read(request)),
        write: request => (keys.push(...request.entries.map(e => e.text)), memory.write(request)),
      };
      const embedder = createEmbedder({ model, cache });
      const [queryVector] = await embedder.embed([QUERY], { purpose: 'query' });
      const [toolVector] = await embedder.embed([QUERY]);
      expect(keys).toEqual([
        reference.queryPrefix + QUERY,
        reference.queryPrefix + QUERY,
        reference.documentPrefix + QUERY,
        reference.documentPrefix + QUERY,
      ]);
      // The same text as a query and as a tool: two vectors, neither taken for the other.
      expect(dot(queryVector!, toolVector!)).toBeLessThan(0.99);
      const { embedding } = await embed({ model, value: QUERY, providerOptions: asQuery });
      expect(dot(queryVector!, embedding)).toBeCloseTo(1, 5);
      // The prefixes are part of the model's id: snapshots and learned vectors follow them.
      expect(embedder.id).toMatch(new RegExp(`^local:${name}#[\\w-]{11}$`));
    });

    it('picks tools by meaning through a tool index', async () => {
      const index = createToolIndex({ embeddingModel: model });
      await index.upsert([
        { name: 'get_forecast', description: 'Get weather forecast for a location.' },
        { name: 'slack_post_message', description: 'Post a new message to a Slack channel' },
        { name: 'read_file', description: 'Read the complete contents of a file.' },
      ]);
      const [top] = await index.search('Should I bring an umbrella to Seattle tomorrow?', {
        topK: 1,
      });
      expect(top?.name).toBe('get_forecast');
    });
  });
}
