import { nextTurn } from '../util/next-turn.ts';

/**
 * Background reads of exact vectors (see `rescoreCandidates`), one after another, so each reads
 * only what is still approximate by then. Each starts from the event loop, once the search that
 * queued it has answered and its caller has gone on (to its model call); a failure is dropped (the
 * vectors stay approximate and a later search tries again).
 *
 * @example
 * ```ts
 * const queue = new RescoreQueue();
 * queue.add(() => rescoreCandidates({ ...request, abortSignal: undefined }));
 * await queue.settled();
 * ```
 */
export class RescoreQueue {
  private tail: Promise<void> = Promise.resolve();

  /** Queues `run` after the reads already queued. */
  add(run: () => Promise<void>): void {
    this.tail = this.tail
      .then(nextTurn)
      .then(run)
      .catch(() => {});
  }

  /** Resolves once every queued read, and any queued meanwhile, has ended; never rejects. */
  async settled(): Promise<void> {
    let tail: Promise<void>;
    do {
      tail = this.tail;
      await tail;
    } while (tail !== this.tail);
  }
}
