import type { LocalModelErrorReason } from '../../errors/local-model-error.ts';

/** What the main thread asks the embedding worker. */
export type WorkerRequest =
  | { type: 'embed'; id: number; texts: readonly string[] }
  | { type: 'cancel'; id: number }
  | { type: 'close' };

/** A `LocalModelError` as it crosses threads. */
export type WorkerError = {
  reason: LocalModelErrorReason;
  message: string;
  path?: string | undefined;
  command?: string | undefined;
};

/**
 * What the embedding worker answers: `ready` once the model is loaded, each request's
 * vectors (their buffers transferred, not copied) or error, and a load failure (no `id`).
 *
 * @example
 * ```ts
 * worker.on('message', (reply: WorkerReply) => reply.type === 'result' && resolve(reply.vectors));
 * ```
 */
export type WorkerReply =
  | { type: 'ready' }
  | { type: 'result'; id: number; vectors: Float32Array[]; tokens: number }
  | { type: 'error'; id?: number; error: WorkerError };
