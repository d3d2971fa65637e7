// worker/: what runs in a local embedding model's worker thread: the tokenizer and ONNX Runtime,
// batching and pooling. This file is the thread's entry: ONNX Runtime's `run` is a synchronous
// native call, which on the main thread would stall every request while a catalog is embedded
// (p99 event-loop delay 544 ms at batch 32; 6 ms from a worker).
import { parentPort, workerData } from 'node:worker_threads';
import { LocalModelError } from '../../errors/local-model-error.ts';
import type { ModelFolder } from '../model-folder.ts';
import { loadTextEmbedder } from './text-embedder.ts';
import type { WorkerReply, WorkerRequest } from './worker-messages.ts';

const port = parentPort!;
const { folder, threads } = workerData as { folder: ModelFolder; threads: number };

// The error's own message (without the command the constructor appends), so the main thread
// builds the same error again.
const errorOf = (error: unknown) =>
  LocalModelError.isInstance(error)
    ? {
        reason: error.reason,
        message: error.message.replace(` Run \`${error.command}\`.`, ''),
        path: error.path,
        command: error.command,
      }
    : { reason: 'corrupt' as const, message: String((error as Error)?.message ?? error) };

const post = (reply: WorkerReply, transfer: ArrayBuffer[] = []) =>
  port.postMessage(reply, transfer);

try {
  const embedder = await loadTextEmbedder({ folder, threads });
  const cancelled = new Set<number>();
  let queue = Promise.resolve();
  port.on('message', (request: WorkerRequest) => {
    if (request.type === 'cancel') {
      cancelled.add(request.id);
      return;
    }
    if (request.type === 'close') {
      queue = queue.then(() => embedder.close()).then(() => port.close());
      return;
    }
    const { id, texts } = request;
    queue = queue.then(async () => {
      try {
        const { vectors, tokens } = await embedder.embed(texts, () => cancelled.has(id));
        if (cancelled.delete(id)) return;
        post(
          { type: 'result', id, vectors, tokens },
          vectors.map(vector => vector.buffer as ArrayBuffer),
        );
      } catch (error) {
        cancelled.delete(id);
        post({ type: 'error', id, error: errorOf(error) });
      }
    });
  });
  post({ type: 'ready' });
} catch (error) {
  post({ type: 'error', error: errorOf(error) });
}
