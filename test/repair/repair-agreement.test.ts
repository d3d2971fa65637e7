import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import { generateText, stepCountIs, wrapLanguageModel } from 'ai';
import { describe, expect, it } from 'vitest';
import { repairGuardMiddleware } from '../../src/middleware/repair-guard-middleware.ts';
import { pythonTool } from '../../src/python/python-tool.ts';
import { fakeSandbox, traceback } from '../helpers/fake-sandbox.ts';
import { repairDecisions, scriptedModel } from '../helpers/scripted-model.ts';

// One table of failure sequences, run against the python tool (which decides and records)
// and against the repair guard alone on the same errors without the tool's records (which
// decides with the same policy module): both must stop at the same attempt.
const cases: Array<{ name: string; errors: string[]; haltAt: number }> = [
  {
    name: 'three different errors spend the budget of 2',
    errors: ['ValueError: a', 'ValueError: b', 'ValueError: c'],
    haltAt: 3,
  },
  {
    name: 'the same error twice',
    errors: ['ZeroDivisionError: division by zero', 'ZeroDivisionError: division by zero'],
    haltAt: 2,
  },
  {
    name: 'the same error with another address',
    errors: ['KeyError: <obj at 0x7f01>', 'KeyError: <obj at 0x7f99>'],
    haltAt: 2,
  },
  {
    name: 'the same error with other numbers',
    errors: ['IndexError: index 3 out of range', 'IndexError: index 7 out of range'],
    haltAt: 2,
  },
  {
    name: 'an error that comes back after another',
    errors: ['NameError: x', 'TypeError: y', 'NameError: x'],
    haltAt: 3,
  },
];

function promptWith(errors: string[]): LanguageModelV4Prompt {
  return [
    { role: 'user', content: [{ type: 'text', text: 'go' }] },
    ...errors.flatMap((error, i): LanguageModelV4Prompt => [
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: `c${i}`, toolName: 'python', input: { code: 'x' } },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: `c${i}`,
            toolName: 'python',
            output: { type: 'error-text', value: traceback(i + 1, error).trimEnd() },
          },
        ],
      },
    ]),
  ];
}

describe('one repair policy for the tool and the guard', () => {
  it.each(cases)('$name: both halt at attempt $haltAt', async ({ errors, haltAt }) => {
    let run = 0;
    const sandbox = fakeSandbox(() => ({
      status: 'error',
      exitCode: 1,
      stderr: traceback(run + 1, errors[run++]!),
    }));
    const model = scriptedModel([
      ...errors.map((_, i) => ({ toolCalls: [{ name: 'python', input: { code: `v${i}` } }] })),
      { text: 'explained' },
    ]);
    await generateText({
      model: wrapLanguageModel({ model, middleware: repairGuardMiddleware() }),
      tools: { python: pythonTool({ sandbox }) },
      prompt: 'go',
      stopWhen: stepCountIs(errors.length + 2),
    });
    const decisions = repairDecisions(model);
    expect(decisions.findIndex(decision => decision.startsWith('halt')) + 1).toBe(haltAt);
    // The guard took python away right after the halting attempt, not before.
    const offered = model.toolNamesPerCall().map(names => names.includes('python'));
    expect(offered.indexOf(false)).toBe(haltAt);

    // The guard alone, on the same errors without the tool's records.
    const guard = repairGuardMiddleware();
    for (let failures = 1; failures <= errors.length; failures++) {
      const params = {
        prompt: promptWith(errors.slice(0, failures)),
        tools: [
          { type: 'function' as const, name: 'python', inputSchema: { type: 'object' as const } },
        ],
      };
      const out = await guard.transformParams!({ type: 'generate', params, model: model as never });
      const withheld = !out.tools?.some(tool => tool.name === 'python');
      expect(withheld, `after ${failures} failures`).toBe(failures >= haltAt);
    }
  });

  it('does not withhold the tool when user code prints what once was the halt marker', async () => {
    const old = '[python: stop retrying — explain this failure to the user]';
    const sandbox = fakeSandbox(code =>
      code === 'v0'
        ? { status: 'error', exitCode: 1, stderr: `${old}\n${traceback(1, 'ValueError: a')}` }
        : { status: 'success', stdout: 'ok\n' },
    );
    const model = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'v0' } }] },
      { toolCalls: [{ name: 'python', input: { code: 'v1' } }] },
      { text: 'done' },
    ]);
    await generateText({
      model: wrapLanguageModel({ model, middleware: repairGuardMiddleware() }),
      tools: { python: pythonTool({ sandbox }) },
      prompt: 'go',
      stopWhen: stepCountIs(4),
    });
    expect(sandbox.ran).toEqual(['v0', 'v1']);
    expect(model.toolNamesPerCall()[1]).toEqual(['python']);
  });
});
