import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ToolExecutionOptions } from 'ai';
import { MockEmbeddingModelV4 } from 'ai/test';
import type { McpEvent, McpStdioServerConfig } from '../../src/mcp/index.ts';

const fixtures = fileURLToPath(new URL('../fixtures/mcp/', import.meta.url));

/** A stdio server config running `test/fixtures/mcp/<file>` with this Node. */
export function fixture(file: string, env: Record<string, string> = {}): McpStdioServerConfig {
  return { command: process.execPath, args: [`${fixtures}${file}`], env };
}

/** The fixture file's absolute path. */
export function fixturePath(file: string): string {
  return `${fixtures}${file}`;
}

/** Options a tool's `execute` receives from the AI SDK. */
export function callOptions(abortSignal?: AbortSignal): ToolExecutionOptions<never> {
  return {
    toolCallId: 'call-1',
    messages: [],
    context: undefined as never,
    ...(abortSignal ? { abortSignal } : {}),
  };
}

/** Live child processes of this (test worker) process, from /proc. */
export function childPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the parenthesised command: state, ppid, ...
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) === process.pid && state !== 'Z') pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** True while `pid` exists (a zombie counts as gone). */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 10_000, what = 'condition' }: { timeoutMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (performance.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise(resolve => setTimeout(resolve, 10));
  }
}

/** Records toolbox events and waits for specific ones. */
export function eventRecorder() {
  const events: (McpEvent & { at: number })[] = [];
  return {
    events,
    onEvent: (event: McpEvent) => void events.push({ ...event, at: performance.now() }),
    /** Resolves with the first event after index `from` matching `match`. */
    next<T extends McpEvent['type']>(
      type: T,
      match: (event: Extract<McpEvent, { type: T }>) => boolean = () => true,
      { from = 0, timeoutMs = 10_000 }: { from?: number; timeoutMs?: number } = {},
    ): Promise<Extract<McpEvent, { type: T }> & { at: number }> {
      return waitFor(
        () =>
          events
            .slice(from)
            .find(event => event.type === type && match(event as never)) as unknown as
            (Extract<McpEvent, { type: T }> & { at: number }) | undefined,
        { timeoutMs, what: `event ${type}` },
      );
    },
  };
}

/** An embedding model that records every text it is asked to embed. */
export function countingEmbeddingModel() {
  const embedded: string[] = [];
  const model = new MockEmbeddingModelV4({
    maxEmbeddingsPerCall: 2048,
    doEmbed: async ({ values }) => {
      embedded.push(...values);
      return { embeddings: values.map(vectorOf), warnings: [] };
    },
  });
  return { model, embedded };
}

// A deterministic 8-dimensional bag-of-characters vector.
function vectorOf(text: string): number[] {
  const vector = new Array<number>(8).fill(0);
  for (let i = 0; i < text.length; i++) vector[text.charCodeAt(i) % 8]! += 1;
  return vector;
}
