// all-mpnet-base-v2 through the MPNet graph this library ships (.ci/run fetches the model): its
// vectors against an independent forward pass, with padding in a batch and a text cut at 384
// tokens (relative distances past the bias table's 128).
import { embedMany } from 'ai';
import { afterAll, expect, it } from 'vitest';
import { localEmbeddingModel } from '../../src/local-embedding/local-embedding-model.ts';
import { describeLocalModel } from '../helpers/local-model.ts';

const LONG = 'Searches the issue tracker for tickets matching a query. '.repeat(60);
const TEXTS = ['This is an example sentence', 'Each sentence is converted', LONG];

// From the research workspace's reference/mpnet_reference.py: a NumPy forward pass of MPNet
// written from transformers' modelling code (float64 softmax and erf), on the same
// model.safetensors, tokenised and cut to 384 tokens by Python tokenizers. Its first two rows
// are the published sentence-transformers example's values to 6 digits. The first 8 values of
// each vector, and the first two's cosine.
const REFERENCE = [
  [0.022503, -0.078292, -0.023031, -0.0051, -0.08034, 0.039132, 0.011343, 0.003465],
  [0.041702, 0.001097, -0.015534, 0.070922, -0.001773, 0.046611, -0.021068, 0.021534],
  [0.012148, 0.103833, -0.037969, 0.033586, -0.03278, -0.004244, -0.038712, 0.059487],
];
const COSINE_01 = 0.404885;
const TOKENS = 7 + 6 + 384;

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
};

describeLocalModel('local model all-mpnet-base-v2', 'all-mpnet-base-v2', () => {
  const model = localEmbeddingModel({ model: 'all-mpnet-base-v2' });
  afterAll(() => model.close());

  it('gives the reference vectors, in one padded batch and past 384 tokens', async () => {
    const { embeddings, usage } = await embedMany({ model, values: TEXTS });
    expect(usage.tokens).toBe(TOKENS);
    embeddings.forEach((vector, i) => {
      expect(vector).toHaveLength(768);
      expect(Math.abs(dot(vector, vector) - 1)).toBeLessThan(1e-5);
      vector.slice(0, 8).forEach((value, d) => expect(value).toBeCloseTo(REFERENCE[i]![d]!, 5));
    });
    expect(dot(embeddings[0]!, embeddings[1]!)).toBeCloseTo(COSINE_01, 5);
  });
});
