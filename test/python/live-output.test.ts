// Output streamed to the chat while code runs: the end of it, at a bounded rate.
import { describe, expect, it } from 'vitest';
import { LiveOutput } from '../../src/python/live-output.ts';

describe('LiveOutput', () => {
  it('hands on the last maxChars characters at most every intervalMs, until the run ends', async () => {
    const live = new LiveOutput({ maxChars: 100, intervalMs: 50 });
    let printing = true;
    const run = (async () => {
      for (let i = 0; i < 60; i++) {
        live.push({ stream: 'stdout', text: `line ${i}\n` });
        await new Promise(resolve => setTimeout(resolve, 5));
      }
      printing = false;
    })();
    const updates: string[] = [];
    const started = Date.now();
    for await (const { output } of live.until(run)) updates.push(output);
    const elapsed = Date.now() - started;
    expect(printing).toBe(false);
    expect(updates.length).toBeGreaterThan(1);
    expect(updates.length).toBeLessThanOrEqual(Math.ceil(elapsed / 50) + 1);
    for (const text of updates) expect(text.length).toBeLessThanOrEqual(100);
    expect(updates[0]).toContain('line 0');
  });

  it('ends when the run fails, without output, and does not throw', async () => {
    const live = new LiveOutput();
    const failed = Promise.reject(new Error('engine down'));
    failed.catch(() => {});
    const updates: string[] = [];
    for await (const { output } of live.until(failed)) updates.push(output);
    expect(updates).toEqual([]);
  });
});
