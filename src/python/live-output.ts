import type { SandboxDisplayResult, SandboxOutputChunk } from '../sandbox/types.ts';
import { type PythonResult, toPythonResults } from './python-results.ts';

/** What a running attempt has shown so far. */
export type LiveSnapshot = {
  /** The end of what it printed. */
  output: string;
  /** The values it showed (without their images, which come with the result). */
  results: PythonResult[];
};

/**
 * What a running attempt has printed and shown so far, for the tool's streamed `running`
 * states: the last `maxChars` characters of stdout and stderr together and the shown values,
 * handed on at most every `intervalMs` (a loop that prints a million lines costs the chat a
 * few updates, not a million).
 *
 * @example
 * ```ts
 * const live = new LiveOutput({ maxChars: 2_000, intervalMs: 250 });
 * const run = sandbox.execute(code, { onOutput: live.push });
 * for await (const { output } of live.until(run)) yield { state: 'running', attempt, code, output };
 * ```
 */
export class LiveOutput {
  private readonly maxChars: number;
  private readonly intervalMs: number;
  private text = '';
  private readonly shown: SandboxDisplayResult[] = [];
  private fresh = false;
  private wake: (() => void) | undefined;

  constructor({
    maxChars = 2_000,
    intervalMs = 250,
  }: {
    /** Characters kept (the end of the output). */
    maxChars?: number;
    /** Least time between two updates. */
    intervalMs?: number;
  } = {}) {
    this.maxChars = maxChars;
    this.intervalMs = intervalMs;
  }

  /** Takes a chunk of output (pass as the run's `onOutput`). */
  readonly push = (chunk: SandboxOutputChunk): void => {
    this.text = (this.text + chunk.text).slice(-this.maxChars);
    this.fresh = true;
    this.wake?.();
  };

  /** Takes a shown value (pass as the cell's `onResult`). */
  readonly pushResult = (result: SandboxDisplayResult): void => {
    const { 'image/png': _png, 'image/jpeg': _jpeg, ...data } = result.data;
    this.shown.push({ main: result.main, data });
    this.fresh = true;
    this.wake?.();
  };

  /** What was printed and shown so far, each time it changed (rate-limited), until `done` settles. */
  async *until(done: Promise<unknown>): AsyncGenerator<LiveSnapshot> {
    let settled = false;
    const finished = done.then(
      () => (settled = true),
      () => (settled = true),
    );
    let last = 0;
    while (!settled) {
      if (!this.fresh) {
        const arrived = new Promise<void>(resolve => (this.wake = resolve));
        await Promise.race([arrived, finished]);
        this.wake = undefined;
        continue;
      }
      const wait = last + this.intervalMs - Date.now();
      if (wait > 0) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([new Promise(resolve => (timer = setTimeout(resolve, wait))), finished]);
        clearTimeout(timer);
        if (settled) break;
      }
      this.fresh = false;
      last = Date.now();
      yield { output: this.text, results: toPythonResults({ results: this.shown }).results };
    }
  }
}
