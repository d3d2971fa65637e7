import { generateText, stepCountIs } from 'ai';
import { pythonTool } from '../../../src/python/python-tool.ts';
import type { DockerSandbox } from '../../../src/sandbox/index.ts';
import { scriptedModel } from '../../helpers/scripted-model.ts';

/** One chat turn: the scripted model calls python with `code`, then answers. */
export async function chatTurn(
  sandbox: DockerSandbox,
  conversation: { id: string; userId: string },
  code: string,
): Promise<{ output: Record<string, unknown>; modelText: string }> {
  const model = scriptedModel([
    { toolCalls: [{ name: 'python', input: { code } }] },
    { text: 'done' },
  ]);
  const result = await generateText({
    model,
    tools: { python: pythonTool({ sandbox, conversation }) },
    prompt: 'run it',
    stopWhen: stepCountIs(3),
  });
  const toolMessage = model.calls[1]!.prompt.find(message => message.role === 'tool')!;
  const part = toolMessage.content[0] as { output: { type: string; value: unknown } };
  return {
    output: result.steps[0]!.toolResults[0]!.output as Record<string, unknown>,
    modelText: JSON.stringify(part.output.value),
  };
}
