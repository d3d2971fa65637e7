import { MockEmbeddingModelV4 } from 'ai/test';
import { tokenize } from '../../src/retrieval/lexical/tokenize.ts';

/**
 * A stand-in embedding model for tests (no model is reachable here): a hashed
 * bag of stemmed words, so texts sharing words are similar. Every call is
 * recorded in `doEmbedCalls`.
 */
export function hashingEmbeddingModel({
  dimensions = 64,
  maxEmbeddingsPerCall = 2048,
  modelId = 'hashing-test',
}: {
  dimensions?: number;
  maxEmbeddingsPerCall?: number;
  modelId?: string;
} = {}): MockEmbeddingModelV4 {
  return new MockEmbeddingModelV4({
    modelId,
    maxEmbeddingsPerCall,
    doEmbed: async ({ values }) => ({
      embeddings: values.map(value => hashEmbed(value, dimensions)),
      warnings: [],
    }),
  });
}

export function hashEmbed(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const token of tokenize(text)) {
    let h = 2166136261;
    for (let i = 0; i < token.length; i++) h = Math.imul(h ^ token.charCodeAt(i), 16777619);
    vector[(h >>> 0) % dimensions]! += 1;
  }
  return vector;
}

/** Number of texts embedded across all calls. */
export function embeddedCount(model: MockEmbeddingModelV4): number {
  return model.doEmbedCalls.reduce((sum, call) => sum + call.values.length, 0);
}
