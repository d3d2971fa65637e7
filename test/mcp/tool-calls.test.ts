import { generateText, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectMcpServers,
  McpTimeoutError,
  McpToolError,
  type McpToolbox,
} from '../../src/mcp/index.ts';
import { chatResponse } from '../../src/index.ts';
import { answerText, readUIChunks } from '../examples/ui-chunks.ts';
import { DEPTH_NOTE, listDepth } from '../helpers/nested-json.ts';
import { scriptedModel } from '../helpers/scripted-model.ts';
import { callOptions, childPids, fixture, fixturePath, waitFor } from './helpers.ts';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

let toolbox: McpToolbox;
beforeAll(async () => {
  toolbox = await connectMcpServers({
    servers: {
      // The stack its `deep` tool needs to write 4,500 levels (see behaviour-server.ts).
      behaviour: {
        command: process.execPath,
        args: ['--stack-size=2000', fixturePath('behaviour-server.ts')],
      },
    },
    callTimeoutMs: 300,
  });
});
afterAll(async () => {
  await toolbox.close();
  await waitFor(() => childPids().length === 0, { what: 'fixture processes to exit' });
});

/** Runs generateText where the model calls `toolName` once, and returns what the model got back. */
async function modelSeesResultOf(toolName: string): Promise<unknown> {
  const model = new MockLanguageModelV4({
    doGenerate: [
      {
        content: [{ type: 'tool-call', toolCallId: 'c1', toolName, input: '{}' }],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      },
      {
        content: [{ type: 'text', text: 'done' }],
        finishReason: { unified: 'stop', raw: undefined },
        usage,
        warnings: [],
      },
    ],
  });
  await generateText({
    model,
    tools: toolbox.tools,
    prompt: 'go',
    stopWhen: ({ steps }) => steps.length >= 2,
  });
  const prompt = model.doGenerateCalls[1]!.prompt as ModelMessage[];
  const toolMessage = prompt.find(message => message.role === 'tool')!;
  return (toolMessage.content as { type: string; output?: unknown }[]).find(
    part => part.type === 'tool-result',
  )!.output;
}

describe('tool calls', () => {
  it('turns an isError result into a thrown McpToolError the model reads as a tool error', async () => {
    const failure = await toolbox.tools.fail!.execute!({}, callOptions()).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(McpToolError.isInstance(failure)).toBe(true);
    expect(failure).toMatchObject({ server: 'behaviour', tool: 'fail' });
    expect(String(failure)).toBe('Quota exceeded for project demo');
    expect(await modelSeesResultOf('fail')).toEqual({
      type: 'error-text',
      value: 'Quota exceeded for project demo',
    });
  });

  it('maps text, image, resource and structured content to model output', async () => {
    expect(await modelSeesResultOf('echo')).toEqual({ type: 'text', value: '{}' });
    expect(await modelSeesResultOf('image')).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: 'A pixel' },
        {
          type: 'file',
          mediaType: 'image/png',
          data: { type: 'data', data: expect.stringMatching(/^iVBOR/) },
        },
      ],
    });
    expect(await modelSeesResultOf('resource')).toEqual({
      type: 'text',
      value:
        'Resource file:///notes.md:\n# Notes\n\nResource link: big.csv <file:///big.csv> - Full data',
    });
    expect(await modelSeesResultOf('structured')).toEqual({ type: 'json', value: { total: 42 } });
  });

  it('fails a call that exceeds callTimeoutMs, and the server stays usable', async () => {
    const started = performance.now();
    const error = await toolbox.tools.sleep!.execute!({ ms: 10_000 }, callOptions()).catch(
      (e: unknown) => e,
    );
    expect(McpTimeoutError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      server: 'behaviour',
      operation: 'tools/call',
      tool: 'sleep',
      timeoutMs: 300,
    });
    expect((error as Error).message).toMatch(/callTimeoutMs/);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(await toolbox.tools.echo!.execute!({ after: 'timeout' }, callOptions())).toEqual({
      content: [{ type: 'text', text: '{"after":"timeout"}' }],
    });
  });

  it("cancels a call with the AI SDK's abortSignal, rejecting with the signal's reason", async () => {
    const controller = new AbortController();
    const call = toolbox.tools.sleep!.execute!({ ms: 250 }, callOptions(controller.signal));
    const reason = new Error('user pressed stop');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    expect(toolbox.status().behaviour!.state).toBe('ready');
  });

  it('cuts a result nested 4,500 levels deep at 64 levels: the chat stream carries it to its end', async () => {
    const model = scriptedModel([
      { toolCalls: [{ name: 'deep', input: {} }] },
      { text: 'It is deep.' },
    ]);
    const chunks = await readUIChunks(
      await chatResponse({
        messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'deep' }] }],
        model,
        tools: { deep: toolbox.tools.deep! },
        index: toolbox.index,
      }),
    );
    expect(chunks.filter(chunk => chunk.type === 'error')).toEqual([]);
    expect(answerText(chunks)).toBe('It is deep.');
    const output = chunks.find(chunk => chunk.type === 'tool-output-available');
    const { structuredContent } = (output as { output: { structuredContent: { tree: unknown } } })
      .output;
    // The output object and structuredContent are the first two of the 64 levels.
    expect(listDepth(structuredContent.tree)).toEqual([62, DEPTH_NOTE]);
  });

  it('sets metadata naming the source server and a JSON Schema input', () => {
    const echo = toolbox.tools.echo!;
    expect(echo.type).toBe('dynamic');
    expect(echo.metadata).toEqual({ mcpServer: 'behaviour', mcpTool: 'echo' });
    expect(echo.description).toBe('Echoes its input');
  });
});

describe('connect timeout', () => {
  it('gives up on a server slower than connectTimeoutMs without holding up the others', async () => {
    const slowToolbox = await connectMcpServers({
      servers: {
        slow: {
          ...fixture('behaviour-server.ts', { START_DELAY_MS: '60000' }),
          connectTimeoutMs: 300,
        },
        quick: fixture('catalog-server.ts', { TOOL_COUNT: '1' }),
      },
    });
    try {
      const { slow, quick } = slowToolbox.status();
      expect(slow!.state).toBe('failed');
      expect(McpTimeoutError.isInstance(slow!.error)).toBe(true);
      expect(slow!.error).toMatchObject({ operation: 'connect', timeoutMs: 300 });
      expect(quick!.state).toBe('ready');
      expect(Object.keys(slowToolbox.tools)).toEqual(['tool_0001']);
    } finally {
      await slowToolbox.close();
    }
    // The stuck child was killed, not orphaned: only the suite's own server remains.
    expect(childPids()).toEqual([toolbox.status().behaviour!.pid]);
  });
});
