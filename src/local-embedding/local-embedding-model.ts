import { availableParallelism } from 'node:os';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type {
  EmbeddingModelV4,
  EmbeddingModelV4CallOptions,
  EmbeddingModelV4Result,
} from '@ai-sdk/provider';
import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import { LocalModelError } from '../errors/local-model-error.ts';
import { DEFAULT_LOCAL_MODEL, LOCAL_MODELS } from './local-models.ts';
import { type ModelFolder, readModelFolder } from './model-folder.ts';
import { defaultModelsDir, fetchCommand } from './models-dir.ts';
import type { WorkerError, WorkerReply, WorkerRequest } from './worker/worker-messages.ts';

/** Options of {@link localEmbeddingModel}. */
export type LocalEmbeddingModelOptions = {
  /** A model `fetch-model` installs, by name (default `all-MiniLM-L6-v2`). */
  model?: string;
  /** The folder models are fetched into (default: `defaultModelsDir()`). */
  modelsDir?: string;
  /** A model folder of your own instead (a sentence-transformers ONNX export); wins over `model`. */
  path?: string;
  /** ONNX Runtime threads (default: the cores, at most 4). */
  threads?: number;
  /** Texts per `doEmbed` call; `embedMany` splits larger batches. */
  maxEmbeddingsPerCall?: number;
};

/**
 * An AI SDK embedding model that runs a small sentence-embedding model on this machine's CPU
 * (ONNX Runtime in a worker thread), from a folder `npx ai-toolbelt fetch-model` filled. Pass
 * it anywhere an embedding model goes: `embed`, `embedMany`, `createToolIndex`. The folder is
 * checked at once (a missing or broken one throws a {@link LocalModelError} naming the path
 * and the command that fetches it); the model loads on the first call or `load()`, and
 * `close()` ends its worker. Node only, with the optional packages onnxruntime-node and
 * @huggingface/tokenizers.
 *
 * @example
 * ```ts
 * import { localEmbeddingModel } from 'ai-toolbelt/local-embedding';
 * await using embeddingModel = localEmbeddingModel(); // all-MiniLM-L6-v2
 * const index = createToolIndex({ embeddingModel });
 * ```
 */
export function localEmbeddingModel(options: LocalEmbeddingModelOptions = {}): LocalEmbeddingModel {
  return new LocalEmbeddingModel(options);
}

/** See {@link localEmbeddingModel}. */
export class LocalEmbeddingModel implements EmbeddingModelV4, AsyncDisposable {
  readonly specificationVersion = 'v4';
  readonly provider = 'local';
  readonly modelId: string;
  readonly maxEmbeddingsPerCall: number;
  // One worker runs one call at a time, and the AI SDK would otherwise queue calls anyway.
  readonly supportsParallelCalls = false;
  /** The model folder. */
  readonly path: string;
  /** Vector length. */
  readonly dimensions: number;
  /** What the model puts before a query (`''` for none): e5's `query: `, bge's instruction. */
  readonly queryPrefix: string;
  /** What it puts before a document, a tool's text (`''` for none): e5's `passage: `. */
  readonly documentPrefix: string;
  private readonly folder: ModelFolder;
  private readonly threads: number;
  private worker: Worker | undefined;
  private ready: Promise<Worker> | undefined;
  private readonly pending = new Map<number, (reply: WorkerReply) => void>();
  private nextId = 0;
  private closed = false;

  constructor({
    model = DEFAULT_LOCAL_MODEL,
    modelsDir = defaultModelsDir(),
    path,
    threads = Math.max(1, Math.min(4, availableParallelism())),
    maxEmbeddingsPerCall = 256,
  }: LocalEmbeddingModelOptions = {}) {
    for (const [argument, value] of [
      ['threads', threads],
      ['maxEmbeddingsPerCall', maxEmbeddingsPerCall],
    ] as const) {
      if (!Number.isInteger(value) || value < 1)
        throw new InvalidArgumentError({ argument, value, message: 'must be an integer >= 1' });
    }
    const known = LOCAL_MODELS.some(spec => spec.name === model);
    const folderPath = path ?? join(modelsDir, model);
    this.folder = readModelFolder({
      path: folderPath,
      ...(path === undefined && known ? { command: fetchCommand(model, modelsDir) } : {}),
    });
    this.path = folderPath;
    this.modelId = this.folder.name;
    this.dimensions = this.folder.settings.dimensions;
    this.queryPrefix = this.folder.settings.queryPrefix ?? '';
    this.documentPrefix = this.folder.settings.documentPrefix ?? '';
    this.threads = threads;
    this.maxEmbeddingsPerCall = maxEmbeddingsPerCall;
  }

  /** Loads the model now (it loads on the first call otherwise); rejects as that call would. */
  async load(): Promise<void> {
    await this.start();
  }

  /**
   * Embeds `values` as documents (tool texts), or as search queries with
   * `providerOptions: { local: { inputType: 'query' } }`: the model's {@link queryPrefix} or
   * {@link documentPrefix} goes before each text (tool indexes pass the option themselves).
   */
  async doEmbed({
    values,
    abortSignal,
    providerOptions,
  }: EmbeddingModelV4CallOptions): Promise<EmbeddingModelV4Result> {
    abortSignal?.throwIfAborted();
    const inputType = providerOptions?.[this.provider]?.inputType ?? 'document';
    if (inputType !== 'query' && inputType !== 'document')
      throw new InvalidArgumentError({
        argument: `providerOptions.${this.provider}.inputType`,
        value: inputType,
        message: "must be 'query' or 'document'",
      });
    const prefix = inputType === 'query' ? this.queryPrefix : this.documentPrefix;
    const texts = prefix === '' ? values : values.map(value => prefix + value);
    const worker = await this.start();
    abortSignal?.throwIfAborted();
    const id = this.nextId++;
    const reply = await new Promise<WorkerReply>((resolve, reject) => {
      const onAbort = () => {
        this.pending.delete(id);
        this.send(worker, { type: 'cancel', id });
        reject(abortSignal!.reason);
      };
      abortSignal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, answer => {
        abortSignal?.removeEventListener('abort', onAbort);
        resolve(answer);
      });
      this.send(worker, { type: 'embed', id, texts });
    });
    if (reply.type === 'error') throw errorFrom(reply.error);
    if (reply.type !== 'result') throw new Error(`unexpected reply ${reply.type}`);
    return {
      embeddings: reply.vectors.map(vector => Array.from(vector)),
      usage: { tokens: reply.tokens },
      warnings: [],
    };
  }

  /** Ends the worker; calls still waiting reject with a `closed` {@link LocalModelError}. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    this.failPending({ reason: 'closed', message: `The local model ${this.modelId} was closed.` });
    if (worker) await worker.terminate();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private start(): Promise<Worker> {
    if (this.closed)
      return Promise.reject(
        errorFrom({ reason: 'closed', message: `The local model ${this.modelId} was closed.` }),
      );
    this.ready ??= new Promise<Worker>((resolve, reject) => {
      // The worker sits beside this file: .ts when run from src/, .js once built. A path string,
      // not `new URL(...)`: bundlers take that for an asset pattern and copy the wrong files.
      const here = fileURLToPath(import.meta.url);
      const file = join(dirname(here), 'worker', `embedding-worker${extname(here)}`);
      const worker = new Worker(file, {
        workerData: { folder: this.folder, threads: this.threads },
      });
      // Held while it loads (a caller waits for it), then only while a call waits.
      this.worker = worker;
      worker.on('message', (reply: WorkerReply) => {
        if (reply.type === 'ready') {
          this.holdProcess(worker);
          return resolve(worker);
        }
        if (reply.type === 'error' && reply.id === undefined) {
          this.ready = undefined; // a later call tries again
          void worker.terminate();
          return reject(errorFrom(reply.error));
        }
        const id = (reply as { id: number }).id;
        const settle = this.pending.get(id);
        this.pending.delete(id);
        this.holdProcess(worker);
        settle?.(reply);
      });
      worker.on('error', error => {
        this.ready = undefined;
        reject(error);
        this.failPending({
          reason: 'corrupt',
          message: `The local model's worker failed: ${error.message}`,
        });
      });
      worker.on('exit', code => {
        if (this.worker !== worker) return;
        this.worker = undefined;
        this.ready = undefined;
        reject(
          errorFrom({ reason: 'corrupt', message: `The local model's worker exited (${code}).` }),
        );
        this.failPending({
          reason: 'corrupt',
          message: `The local model's worker exited (${code}).`,
        });
      });
    });
    return this.ready;
  }

  private send(worker: Worker, request: WorkerRequest): void {
    worker.postMessage(request);
    this.holdProcess(worker);
  }

  // The worker keeps the process alive only while a call waits for it: an idle model does not.
  private holdProcess(worker: Worker): void {
    if (this.pending.size > 0) worker.ref();
    else worker.unref();
  }

  private failPending(error: WorkerError): void {
    for (const [id, settle] of this.pending) {
      this.pending.delete(id);
      settle({ type: 'error', id, error });
    }
  }
}

function errorFrom({ reason, message, path, command }: WorkerError): LocalModelError {
  return new LocalModelError({
    reason,
    message,
    ...(path !== undefined ? { path } : {}),
    ...(command !== undefined ? { command } : {}),
  });
}
