// A user's first script, run from an app that installed the packed tarball: tool selection
// narrows the tools, and the model's python runs in the real sandbox. Prints a JSON summary.
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { createToolIndex, pythonTool, toolSelection } from 'ai-toolbelt';
import { connectMcpServers } from 'ai-toolbelt/mcp';
import { DockerSandbox } from 'ai-toolbelt/sandbox';
import { LexicalIndex } from 'ai-toolbelt/internal';
import { z } from 'zod';

const usage = { inputTokens: { total: 1, noCache: 1 }, outputTokens: { total: 1, text: 1 } };
const answer = content => ({
  content,
  finishReason: { unified: 'stop', raw: 'stop' },
  usage,
  warnings: [],
});
const model = new MockLanguageModelV4({
  doGenerate: [
    answer([
      { type: 'tool-call', toolCallId: 'c1', toolName: 'python', input: '{"code":"print(6 * 7)"}' },
    ]),
    answer([{ type: 'text', text: 'done' }]),
  ],
});
const noop = description =>
  tool({ description, inputSchema: z.object({}), execute: async () => 'ok' });
await using sandbox = await DockerSandbox.create({ warmPoolSize: 0, preimport: [] });
const tools = {
  get_weather: noop('Current weather for a city'),
  send_email: noop('Send an email'),
  create_issue: noop('Open a GitHub issue'),
  python: pythonTool({ sandbox }),
};
const selection = toolSelection({ index: createToolIndex(), topK: 1, pinned: ['python'] });
const result = await generateText({
  model: wrapLanguageModel({ model, middleware: selection.middleware }),
  tools,
  prompt: 'what is the weather like, and compute 6 * 7 in python',
  stopWhen: stepCountIs(3),
});
console.log(
  JSON.stringify({
    offered: model.doGenerateCalls[0].tools.map(t => t.name),
    python: result.steps[0].toolResults[0].output.stdout,
    text: result.text,
    mcp: typeof connectMcpServers,
    internal: typeof LexicalIndex,
  }),
);
