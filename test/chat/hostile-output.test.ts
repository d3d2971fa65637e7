// What sandboxed code hands the chat on purpose to mislead or break it (issue 45, findings 6 and 7),
// through the real stream on the real Docker + gVisor sandbox; only the model is scripted.
import type { UIMessageChunk } from 'ai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chatResponse, createToolIndex } from '../../src/index.ts';
import type { PythonToolOutput } from '../../src/python/index.ts';
import { DockerSandbox } from '../../src/sandbox/index.ts';
import { describeWith } from '../e2e/support/describe-e2e.ts';
import { DEEP_JSON_CODE, HOSTILE_FILE_CODE } from '../e2e/support/hostile-output-scenario.ts';
import { answerText, readUIChunks } from '../examples/ui-chunks.ts';
import { DEPTH_NOTE, listDepth } from '../helpers/nested-json.ts';
import { scriptedModel } from '../helpers/scripted-model.ts';

describeWith({}, 'hostile python output in the chat stream (real engine)', () => {
  let sandbox: DockerSandbox;
  let chats = 0;
  beforeAll(async () => {
    sandbox = await DockerSandbox.create({ warmPoolSize: 0, preimport: [] });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  // One chat turn through the real stream: python runs `code` as a cell, then the model answers.
  async function turn(code: string): Promise<{ chunks: UIMessageChunk[]; output: unknown }> {
    const model = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code } }] },
      { text: 'Here it is.' },
    ]);
    const response = await chatResponse({
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Run it.' }] }],
      model,
      tools: {},
      index: createToolIndex(),
      sandbox,
      conversation: { id: `hostile-output-${++chats}`, userId: 'mallory' },
    });
    const chunks = await readUIChunks(response);
    const output = chunks.findLast(chunk => chunk.type === 'tool-output-available');
    return { chunks, output: output?.type === 'tool-output-available' ? output.output : undefined };
  }

  it('a file named with a right-to-left override reaches the page without it', async () => {
    const { chunks, output } = await turn(HOSTILE_FILE_CODE);
    expect(answerText(chunks)).toBe('Here it is.');
    const success = output as Extract<PythonToolOutput, { state: 'success' }>;
    expect(success.state).toBe('success');
    expect(success.files.map(file => file.name)).toEqual(['outputs/photogpj.exe']);
  }, 120_000);

  it('a value whose JSON nests 4,500 levels: the answer completes, the JSON cut at 64 levels with a note', async () => {
    const { chunks, output } = await turn(DEEP_JSON_CODE);
    expect(chunks.filter(chunk => chunk.type === 'error')).toEqual([]);
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(answerText(chunks)).toBe('Here it is.');
    const success = output as Extract<PythonToolOutput, { state: 'success' }>;
    expect(success.state).toBe('success');
    const [shown] = success.results ?? [];
    expect(shown?.text).toBe('Deep()');
    expect(listDepth(shown?.json)).toEqual([64, DEPTH_NOTE]);
  }, 120_000);

  it("a value too deep for Python's own recursion limit: the cell still succeeds, the JSON left out with a note", async () => {
    const code = DEEP_JSON_CODE.replace('sys.setrecursionlimit(20000)', 'pass');
    const { chunks, output } = await turn(code);
    expect(answerText(chunks)).toBe('Here it is.');
    const success = output as Extract<PythonToolOutput, { state: 'success' }>;
    expect(success.state).toBe('success');
    expect(success.results).toEqual([{ main: true, text: 'Deep()' }]);
    expect(success.notes).toContain('a application/json result was left out: nested too deep');
  }, 120_000);
});
