import { describe, expect, it } from 'vitest';
import { withDeadline } from '../../src/util/with-deadline.ts';

describe('withDeadline', () => {
  it('takes what is left of a budget: a fraction or a spent (negative) budget', async () => {
    const late = new Error('late');
    await expect(
      withDeadline({ timeoutMs: 18528.94, run: async () => 'done', timeoutError: () => late }),
    ).resolves.toBe('done');
    await expect(
      withDeadline({ timeoutMs: -3.5, run: () => new Promise(() => {}), timeoutError: () => late }),
    ).rejects.toBe(late);
  });

  it('rejects with the abort reason, and passes the signal to the work', async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const pending = withDeadline({
      timeoutMs: 60_000,
      abortSignal: controller.signal,
      run: signal => {
        seen = signal;
        return new Promise(() => {});
      },
      timeoutError: () => new Error('late'),
    });
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
    expect(seen?.aborted).toBe(true);
  });
});
