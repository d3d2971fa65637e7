import { createHash } from 'node:crypto';
import type { EmbeddingModelV4 } from '@ai-sdk/provider';

/**
 * A model that knows nothing: each text gets a unit vector drawn from a generator seeded by the
 * text's hash, so a dense channel over it ranks at random (the same way every run). What the
 * default fusion costs where the dense channel adds nothing is hybrid over this against lexical.
 */
export function randomEmbeddingModel({ dimensions = 384 } = {}): EmbeddingModelV4 {
  const vector = (text: string): number[] => {
    const seed = createHash('sha256').update(text).digest();
    // xorshift32 from the hash; Box-Muller for directions uniform on the sphere.
    let state = seed.readUInt32LE(0) || 1;
    const next = () => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return ((state >>> 0) + 0.5) / 2 ** 32;
    };
    const values = Array.from(
      { length: dimensions },
      () => Math.sqrt(-2 * Math.log(next())) * Math.cos(2 * Math.PI * next()),
    );
    const norm = Math.hypot(...values);
    return values.map(value => value / norm);
  };
  return {
    specificationVersion: 'v4',
    provider: 'bench',
    modelId: `random-${dimensions}`,
    maxEmbeddingsPerCall: 2048,
    supportsParallelCalls: true,
    async doEmbed({ values }) {
      return { embeddings: values.map(vector), warnings: [] };
    },
  };
}
