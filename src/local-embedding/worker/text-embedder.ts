import { LocalModelError } from '../../errors/local-model-error.ts';
import type { ModelFolder } from '../model-folder.ts';
import { poolTokens } from './pool-tokens.ts';

/** The optional packages that run a local model, as the error names them. */
export const RUNTIME_PACKAGES = 'onnxruntime-node@^1.31.1 @huggingface/tokenizers@^0.2.0';

// Tokens and texts per batch at most (texts x their padded length). On 2 cores larger batches are
// no faster, and the memory their activations took stays with the allocator: 8 texts a batch
// grew a 3,000-tool embedding's RSS by about 160 MB, 4 by about 125 MB, at the same speed.
const MAX_BATCH_TOKENS = 1024;
const MAX_BATCH_TEXTS = 4;

/** Embeds texts with one model folder; runs in the embedding worker. */
export type TextEmbedder = {
  /**
   * The texts' vectors, in order, and how many tokens they took. `cancelled` is checked between
   * batches: a call that is no longer wanted stops there.
   */
  embed(
    texts: readonly string[],
    cancelled?: () => boolean,
  ): Promise<{ vectors: Float32Array[]; tokens: number }>;
  close(): Promise<void>;
};

/**
 * Loads a model folder into ONNX Runtime (CPU) with its tokenizer. Texts are cut to the
 * model's `maxTokens` (the first pieces, then the closing token: `[SEP]`, `</s>`), batched by length so that padding
 * wastes little, and pooled and normalised as the folder says.
 *
 * @example
 * ```ts
 * const embedder = await loadTextEmbedder({ folder: readModelFolder({ path }), threads: 2 });
 * const { vectors } = await embedder.embed(['weather in Paris']);
 * ```
 */
export async function loadTextEmbedder({
  folder,
  threads,
}: {
  /** The checked model folder. */
  folder: ModelFolder;
  /** ONNX Runtime's intra-op threads. */
  threads: number;
}): Promise<TextEmbedder> {
  let ort: typeof import('onnxruntime-node');
  let Tokenizer: typeof import('@huggingface/tokenizers').Tokenizer;
  try {
    [ort, { Tokenizer }] = await Promise.all([
      import('onnxruntime-node'),
      import('@huggingface/tokenizers'),
    ]);
  } catch (cause) {
    throw new LocalModelError({
      reason: 'runtime-missing',
      message:
        'Local embedding models need the optional packages onnxruntime-node and @huggingface/tokenizers.',
      command: `npm install ${RUNTIME_PACKAGES}`,
      cause,
    });
  }
  const { settings } = folder;
  let session: import('onnxruntime-node').InferenceSession;
  let tokenizer: InstanceType<typeof Tokenizer>;
  try {
    tokenizer = new Tokenizer(folder.tokenizer, folder.tokenizerConfig);
    session = await ort.InferenceSession.create(folder.onnxPath, {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'all',
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      // Without the arena, memory goes back after each batch: with it, embedding 3,000 tools grew
      // RSS about twice as much, at the same speed.
      enableCpuMemArena: false,
      // A memory pattern is planned and kept per input shape, and batches come in many shapes.
      enableMemPattern: false,
    });
  } catch (cause) {
    throw new LocalModelError({
      reason: 'corrupt',
      message: `The model at ${folder.path} could not be loaded: ${(cause as Error).message}`,
      path: folder.onnxPath,
      cause,
    });
  }
  if (!session.outputNames.includes(settings.output)) {
    throw new LocalModelError({
      reason: 'corrupt',
      message: `The graph ${folder.onnxPath} has no output "${settings.output}" (it has ${session.outputNames.join(', ')}).`,
      path: folder.onnxPath,
    });
  }
  // The token the tokenizer closes a text with ([SEP] for BERT, </s> for MPNet), if any: what
  // an empty text ends with.
  const closing = tokenizer.encode('').ids.at(-1);
  const encode = (text: string): number[] => {
    const ids = tokenizer.encode(text).ids;
    if (ids.length <= settings.maxTokens) return ids;
    // The tokenizer keeps no truncation setting: cut here, keeping the closing token.
    const cut = ids.slice(0, settings.maxTokens - (closing === undefined ? 0 : 1));
    if (closing !== undefined) cut.push(closing);
    return cut;
  };

  const run = async (batch: number[][]): Promise<Float32Array[]> => {
    const rows = batch.length;
    const width = Math.max(...batch.map(ids => ids.length));
    const ids = new BigInt64Array(rows * width);
    const mask = new BigInt64Array(rows * width);
    batch.forEach((row, r) =>
      row.forEach((id, t) => {
        ids[r * width + t] = BigInt(id);
        mask[r * width + t] = 1n;
      }),
    );
    const feeds: Record<string, import('onnxruntime-node').Tensor> = {
      input_ids: new ort.Tensor('int64', ids, [rows, width]),
      attention_mask: new ort.Tensor('int64', mask, [rows, width]),
    };
    if (settings.tokenTypeIds)
      feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(rows * width), [
        rows,
        width,
      ]);
    const result = await session.run(feeds, [settings.output]);
    const output = result[settings.output]!;
    try {
      return poolTokens({
        hidden: output.data as Float32Array,
        lengths: batch.map(row => row.length),
        width,
        dimensions: output.dims[2] as number,
        pooling: settings.pooling,
        normalize: settings.normalize,
      });
    } finally {
      output.dispose();
    }
  };

  return {
    async embed(texts, cancelled = () => false) {
      const encoded = texts.map(encode);
      // Longest first, so each batch pads to about its own length.
      const order = encoded
        .map((_, i) => i)
        .sort((a, b) => encoded[b]!.length - encoded[a]!.length);
      const vectors = new Array<Float32Array>(texts.length);
      for (let start = 0; start < order.length;) {
        if (cancelled()) break;
        const longest = encoded[order[start]!]!.length;
        const size = Math.max(1, Math.min(MAX_BATCH_TEXTS, Math.floor(MAX_BATCH_TOKENS / longest)));
        const slice = order.slice(start, start + size);
        const out = await run(slice.map(i => encoded[i]!));
        slice.forEach((i, j) => (vectors[i] = out[j]!));
        start += slice.length;
      }
      return { vectors, tokens: encoded.reduce((sum, ids) => sum + ids.length, 0) };
    },
    async close() {
      await session.release();
    },
  };
}
