import { describe, expect, it } from 'vitest';
import { RescoreQueue } from '../../src/retrieval/rescore-queue.ts';

describe('RescoreQueue', () => {
  it('run reads one after another, after the caller has gone on, and drop their failures', async () => {
    const queue = new RescoreQueue();
    const log: string[] = [];
    let release!: () => void;
    queue.add(async () => {
      log.push('first starts');
      await new Promise<void>(resolve => (release = resolve));
      log.push('first ends');
    });
    queue.add(async () => {
      log.push('second');
      throw new Error('store down');
    });
    queue.add(async () => {
      log.push('third');
    });
    // Nothing runs in the caller's turn; the first read starts from the event loop.
    log.push('caller goes on');
    expect(log).toEqual(['caller goes on']);
    for (let turn = 0; turn < 2; turn++) await new Promise(resolve => setImmediate(resolve));
    expect(log).toEqual(['caller goes on', 'first starts']);
    release();
    await queue.settled();
    expect(log).toEqual(['caller goes on', 'first starts', 'first ends', 'second', 'third']);
  });

  it('settle only once reads queued while waiting have ended too', async () => {
    const queue = new RescoreQueue();
    const log: string[] = [];
    queue.add(async () => {
      log.push('first');
      queue.add(async () => {
        log.push('queued meanwhile');
      });
    });
    await queue.settled();
    expect(log).toEqual(['first', 'queued meanwhile']);
  });
});
