import {
  createUIMessageStream,
  generateText,
  readUIMessageStream,
  stepCountIs,
  streamText,
  toUIMessageStream,
  wrapLanguageModel,
} from 'ai';
import { describe, expect, it } from 'vitest';
import { repairGuardMiddleware } from '../../src/middleware/repair-guard-middleware.ts';
import { DockerTimeoutError } from '../../src/errors/docker-timeout-error.ts';
import { SandboxBusyError } from '../../src/errors/sandbox-busy-error.ts';
import { SandboxCleanupError } from '../../src/errors/sandbox-cleanup-error.ts';
import { SandboxUnavailableError } from '../../src/errors/sandbox-unavailable-error.ts';
import type { PythonSandbox } from '../../src/python/python-sandbox.ts';
import type { PythonAttemptEvent } from '../../src/python/python-tool-output.ts';
import { BUSY_MESSAGE, UNAVAILABLE_MESSAGE, pythonTool } from '../../src/python/python-tool.ts';
import type { FailedRun } from '../../src/repair/repair-policy.ts';
import { repairTimeline } from '../../src/python/repair-timeline.ts';
import { fakeSandbox, traceback } from '../helpers/fake-sandbox.ts';
import { errorTexts, repairDecisions, scriptedModel } from '../helpers/scripted-model.ts';

const ok = (stdout: string) => ({ status: 'success' as const, stdout });
const fails = (line: number, exception: string) => ({
  status: 'error' as const,
  exitCode: 1,
  stderr: traceback(line, exception),
});

describe('python tool, agent mode (default)', () => {
  it('returns stdout on the first try', async () => {
    const sandbox = fakeSandbox(() => ok('42\n'));
    const model = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'print(6*7)' } }] },
      { text: 'It is 42.' },
    ]);
    const result = await generateText({
      model,
      tools: { python: pythonTool({ sandbox }) },
      prompt: '6*7?',
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe('It is 42.');
    expect(result.steps[0]!.toolResults[0]!.output).toMatchObject({
      state: 'success',
      attempts: 1,
      stdout: '42\n',
    });
    const toModel = model.calls[1]!.prompt.at(-1)!;
    expect(toModel).toMatchObject({
      role: 'tool',
      content: [{ output: { type: 'text', value: '42\n' } }],
    });
  });

  it('adds refused connections to the error the model reads', async () => {
    const sandbox = fakeSandbox(() => ({
      ...fails(2, 'urllib.error.HTTPError: HTTP Error 403: Forbidden'),
      network: {
        connections: 0,
        bytesSent: 0,
        bytesReceived: 0,
        hosts: [],
        refused: [
          {
            host: 'api.example.com',
            port: 443,
            reason: 'not-allowed',
            detail: 'not on the egress allow-list',
          },
        ],
        refusedCount: 1,
      },
    }));
    const model = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'fetch()' } }] },
      { text: 'The host is not reachable.' },
    ]);
    await generateText({
      model,
      tools: { python: pythonTool({ sandbox }) },
      prompt: 'fetch it',
      stopWhen: stepCountIs(3),
    });
    expect(errorTexts(model)).toEqual([
      `${traceback(2, 'urllib.error.HTTPError: HTTP Error 403: Forbidden').trimEnd()}\n` +
        'Network: refused api.example.com:443: not on the egress allow-list.',
    ]);
  });

  it('hands the model the trimmed error without "Error:" noise, then runs its fix', async () => {
    const sandbox = fakeSandbox(code =>
      code.includes('undefined_name')
        ? fails(1, "NameError: name 'undefined_name' is not defined")
        : ok('3\n'),
    );
    const model = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'print(undefined_name)' } }] },
      { toolCalls: [{ name: 'python', input: { code: 'print(1+2)' } }] },
      { text: 'Fixed: 3' },
    ]);
    const guard = repairGuardMiddleware();
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: guard }),
      tools: { python: pythonTool({ sandbox }) },
      prompt: 'print a sum',
      stopWhen: stepCountIs(5),
    });
    expect(result.text).toBe('Fixed: 3');
    expect(sandbox.ran).toEqual(['print(undefined_name)', 'print(1+2)']);
    expect(errorTexts(model)).toEqual([
      traceback(1, "NameError: name 'undefined_name' is not defined").trimEnd(),
    ]);
    expect(result.steps[1]!.toolResults[0]!.output).toMatchObject({
      state: 'success',
      attempt: 2,
      attempts: 1,
    });
  });

  it('spends the budget, then the guard withholds the tool and asks for an explanation', async () => {
    let n = 0;
    const sandbox = fakeSandbox(() =>
      fails(1, `ValueError: bad value ${['a', 'b', 'c', 'd'][n++]}`),
    );
    const model = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'v1' } }] },
      { toolCalls: [{ name: 'python', input: { code: 'v2' } }] },
      { toolCalls: [{ name: 'python', input: { code: 'v3' } }] },
      { text: 'I could not make it work: ValueError.' },
    ]);
    const halts: unknown[] = [];
    const result = await generateText({
      model: wrapLanguageModel({
        model,
        middleware: repairGuardMiddleware({ onHalt: e => halts.push(e) }),
      }),
      tools: { python: pythonTool({ sandbox }) },
      prompt: 'compute it',
      stopWhen: stepCountIs(10),
    });
    expect(sandbox.ran).toEqual(['v1', 'v2', 'v3']); // 1 run + 2 repairs
    expect(model.toolNamesPerCall()).toEqual([['python'], ['python'], ['python'], []]);
    expect(model.calls[3]!.prompt[0]).toMatchObject({
      role: 'system',
      content: expect.stringMatching(/python tool failed 3 times in a row.*explain/),
    });
    expect(repairDecisions(model)).toEqual([
      'repair:repairable',
      'repair:repairable',
      'halt:budget',
    ]);
    expect(halts).toEqual([{ toolName: 'python', failures: 3, reason: 'budget' }]);
    expect(result.text).toContain('could not');
  });

  it('halts early on a repeated error, also when line numbers differ', async () => {
    const sandbox = fakeSandbox(code => fails(code.length, 'ZeroDivisionError: division by zero'));
    const model = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'print(1/0)' } }] },
      { toolCalls: [{ name: 'python', input: { code: 'x = 0\nprint(1/x)' } }] },
      { text: 'Division by zero, sorry.' },
    ]);
    await generateText({
      model: wrapLanguageModel({ model, middleware: repairGuardMiddleware() }),
      tools: { python: pythonTool({ sandbox }) },
      prompt: 'divide',
      stopWhen: stepCountIs(10),
    });
    expect(sandbox.ran).toHaveLength(2);
    expect(repairDecisions(model)).toEqual(['repair:repairable', 'halt:repeated-error']);
    expect(model.toolNamesPerCall()[2]).toEqual([]);
  });

  it('does not repair a timeout by default', async () => {
    const sandbox = fakeSandbox(() => ({ status: 'timeout', exitCode: null, stdout: 'started\n' }));
    const model = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'while True: pass' } }] },
      { text: 'It ran too long.' },
    ]);
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: repairGuardMiddleware() }),
      tools: { python: pythonTool({ sandbox, timeoutMs: 2000 }) },
      prompt: 'loop',
      stopWhen: stepCountIs(5),
    });
    expect(errorTexts(model)).toEqual([
      'Timed out after 2000 ms and was stopped.\nIts last output:\nstarted',
    ]);
    expect(repairDecisions(model)).toEqual(['halt:not-repairable']);
    expect(model.toolNamesPerCall()[1]).toEqual([]);
    // A failed run is the tool's result (the model reads it as a tool error), not a thrown error.
    expect(result.steps[0]!.toolResults[0]!.output).toMatchObject({
      state: 'failed',
      status: 'timeout',
      fingerprint: 'timeout',
      next: 'halt',
    });
  });

  it('guards statelessly: a replayed conversation in a fresh guard decides the same', async () => {
    const sandbox = fakeSandbox(() => fails(1, 'KeyError: x'));
    const model = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'a' } }] },
      { toolCalls: [{ name: 'python', input: { code: 'b' } }] },
      { text: 'gave up' },
    ]);
    const first = await generateText({
      model: wrapLanguageModel({ model, middleware: repairGuardMiddleware() }),
      tools: { python: pythonTool({ sandbox }) },
      prompt: 'go',
      stopWhen: stepCountIs(10),
    });
    // A new request (as in a serverless route) carrying the same conversation.
    const replay = scriptedModel([{ text: 'still explaining' }]);
    await generateText({
      model: wrapLanguageModel({ model: replay, middleware: repairGuardMiddleware() }),
      tools: { python: pythonTool({ sandbox: fakeSandbox(() => ok('')) }) },
      messages: [{ role: 'user', content: 'go' }, ...first.responseMessages.slice(0, -1)],
    });
    expect(replay.toolNamesPerCall()).toEqual([[]]);
    // A new user turn resets the budget.
    const nextTurn = scriptedModel([{ text: 'ok' }]);
    await generateText({
      model: wrapLanguageModel({ model: nextTurn, middleware: repairGuardMiddleware() }),
      tools: { python: pythonTool({ sandbox }) },
      messages: [
        { role: 'user', content: 'go' },
        ...first.responseMessages,
        { role: 'user', content: 'try something else' },
      ],
    });
    expect(nextTurn.toolNamesPerCall()).toEqual([['python']]);
  });
});

describe('python tool, inline mode', () => {
  it('repairs with a repair model that answers fenced or unfenced code', async () => {
    const sandbox = fakeSandbox(code =>
      code === 'print(x)'
        ? fails(1, "NameError: name 'x' is not defined")
        : code === 'x = 1\nprint(y)'
          ? fails(2, "NameError: name 'y' is not defined")
          : ok('1\n'),
    );
    const repairModel = scriptedModel([
      { text: 'Here you go:\n```python\nx = 1\nprint(y)\n```' },
      { text: 'x = 1\nprint(x)' },
    ]);
    const main = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'print(x)' } }] },
      { text: 'x is 1' },
    ]);
    const result = await generateText({
      model: main,
      tools: { python: pythonTool({ sandbox, repair: { model: repairModel } }) },
      prompt: 'print x',
      stopWhen: stepCountIs(3),
    });
    expect(sandbox.ran).toEqual(['print(x)', 'x = 1\nprint(y)', 'x = 1\nprint(x)']);
    expect(result.steps[0]!.toolResults[0]!.output).toMatchObject({
      state: 'success',
      attempt: 3,
      attempts: 3,
    });
    const repairPrompt = repairModel.calls[0]!.prompt.at(-1)!;
    expect(JSON.stringify(repairPrompt)).toContain(
      'Repair this Python code and return only code.\\nprint(x)\\nError:\\nTraceback',
    );
    expect(main.calls[1]!.prompt.at(-1)).toMatchObject({
      content: [{ output: { type: 'text', value: '1\n' } }],
    }); // only the final result
  });

  it('stops at the budget and reports the last error to the model', async () => {
    const sandbox = fakeSandbox(code => fails(1, `RuntimeError: nope ${code}`));
    const repairModel = scriptedModel([{ text: 'a' }, { text: 'b' }]);
    const main = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'z' } }] },
      { text: 'failed' },
    ]);
    await generateText({
      model: main,
      tools: { python: pythonTool({ sandbox, repair: { model: repairModel }, maxRepairs: 1 }) },
      prompt: 'go',
      stopWhen: stepCountIs(3),
    });
    expect(sandbox.ran).toEqual(['z', 'a']); // the original and one repair
    expect(errorTexts(main)).toEqual([traceback(1, 'RuntimeError: nope a').trimEnd()]);
    expect(repairDecisions(main)).toEqual(['halt:budget']);
  });

  it('halts on a repeated error in inline mode too', async () => {
    const sandbox = fakeSandbox(code => fails(code.length, 'RuntimeError: same'));
    const repairModel = scriptedModel([{ text: 'changed code' }]);
    const main = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'z' } }] },
      { text: 'failed' },
    ]);
    await generateText({
      model: main,
      tools: { python: pythonTool({ sandbox, repair: { model: repairModel } }) },
      prompt: 'go',
      stopWhen: stepCountIs(3),
    });
    expect(sandbox.ran).toEqual(['z', 'changed code']);
    expect(repairModel.calls).toHaveLength(1);
  });
});

describe('streaming attempts to the UI', () => {
  it('streams preliminary states in order in streamText and the UI message stream', async () => {
    const sandbox = fakeSandbox(code =>
      code === 'bad' ? fails(1, 'TypeError: bad operand') : ok('done\n'),
    );
    const repairModel = scriptedModel([{ text: '```python\ngood\n```' }]);
    const model = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'bad' } }] },
      { text: 'all good' },
    ]);
    const timeline: unknown[] = [];
    const tools = { python: pythonTool({ sandbox, repair: { model: repairModel } }) };
    const stream = createUIMessageStream({
      execute({ writer }) {
        const tool = pythonTool({
          sandbox,
          repair: { model: repairModel },
          onAttempt: repairTimeline(writer),
        });
        const result = streamText({
          model,
          tools: { python: tool },
          prompt: 'go',
          stopWhen: stepCountIs(3),
        });
        writer.merge(toUIMessageStream({ stream: result.stream, tools }));
      },
    });
    const chunks: {
      type: string;
      preliminary?: boolean;
      output?: { state: string };
      id?: string;
      data?: { state: string; attempt: number };
    }[] = [];
    for await (const chunk of stream) chunks.push(chunk as never);
    const toolStates = chunks
      .filter(c => c.type === 'tool-output-available')
      .map(c => `${c.output!.state}${c.preliminary ? '*' : ''}`);
    expect(toolStates).toEqual([
      'running*',
      'failed*',
      'repairing*',
      'running*',
      'success*',
      'success',
    ]);
    const repairParts = chunks
      .filter(c => c.type === 'data-repair')
      .map(c => `${c.id!.split(':')[1]} ${c.data!.state}`);
    expect(repairParts).toEqual(['1 running', '1 failed', '2 repairing', '2 running', '2 success']);
    timeline.push(...repairParts);

    // And the client-side view: the last UI message carries the tool part with its final output.
    const replayModel = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'bad' } }] },
      { text: 'ok' },
    ]);
    const replaySandbox = fakeSandbox(() => ok('x\n'));
    const ui = toUIMessageStream({
      stream: streamText({
        model: replayModel,
        tools: { python: pythonTool({ sandbox: replaySandbox }) },
        prompt: 'go',
        stopWhen: stepCountIs(3),
      }).stream,
      tools,
    });
    let last: { parts: { type: string; state?: string; output?: { state: string } }[] } | undefined;
    for await (const message of readUIMessageStream({ stream: ui })) last = message as never;
    expect(last!.parts.find(p => p.type === 'tool-python')).toMatchObject({
      state: 'output-available',
      output: { state: 'success' },
    });
  });
});

describe('python tool, when the sandbox itself fails', () => {
  const hostly = new SandboxUnavailableError({
    reason: 'docker-unreachable',
    engine: 'unix:///var/run/docker.sock',
    message:
      'The Docker engine unix:///var/run/docker.sock is not answering: connect ENOENT /var/run/docker.sock. Start it (sudo bash scripts/setup-sandbox.sh) and check `docker info`; remove leftovers with `docker rm -f`.',
  });
  const throwing = (error: unknown): PythonSandbox => ({
    execute: async () => {
      throw error;
    },
  });

  for (const [name, error, expected] of [
    ['SandboxUnavailableError', hostly, UNAVAILABLE_MESSAGE],
    [
      'DockerTimeoutError',
      new DockerTimeoutError({ operation: 'container start', timeoutMs: 15_000 }),
      UNAVAILABLE_MESSAGE,
    ],
    [
      'SandboxCleanupError',
      new SandboxCleanupError({ containerIds: ['c0ffee'], causes: [hostly] }),
      UNAVAILABLE_MESSAGE,
    ],
    ['SandboxBusyError', new SandboxBusyError({ resource: 'runs', limit: 64 }), BUSY_MESSAGE],
    [
      'a raw dockerode error',
      Object.assign(new Error('(HTTP code 500) server error - runsc: /var/lib/docker/...'), {
        statusCode: 500,
      }),
      UNAVAILABLE_MESSAGE,
    ],
  ] as const) {
    it(`${name}: the model reads a short host-free line, the app gets the typed error`, async () => {
      const failures: FailedRun[] = [];
      const attempts: PythonAttemptEvent[] = [];
      const model = scriptedModel([
        { toolCalls: [{ name: 'python', input: { code: 'print(1)' } }] },
        { text: 'The sandbox is down.' },
      ]);
      await generateText({
        model,
        tools: {
          python: pythonTool({
            sandbox: throwing(error),
            onError: failure => void failures.push(failure),
            onAttempt: event => attempts.push(event),
          }),
        },
        prompt: 'run it',
        stopWhen: stepCountIs(3),
      });
      const [text] = errorTexts(model);
      expect(text).toBe(expected);
      expect(text).not.toMatch(/docker|\/var\/|\/tmp|scripts\/|sudo|unix:|HTTP|runsc|c0ffee/i);
      expect(repairDecisions(model)).toEqual(['halt:not-repairable']);
      expect(failures).toHaveLength(1);
      expect(failures[0]).toMatchObject({ status: 'unavailable', attempt: 1, code: 'print(1)' });
      expect(failures[0]!.cause).toBe(error);
      expect(attempts.at(-1)).toMatchObject({
        state: 'failed',
        status: 'unavailable',
        error: expected,
      });
      expect(JSON.stringify(attempts)).not.toMatch(/docker|\/var\//i);
    });
  }

  it('without an onError hook, reports the typed error as a process warning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const model = scriptedModel([
        { toolCalls: [{ name: 'python', input: { code: 'print(1)' } }] },
        { text: 'down' },
      ]);
      await generateText({
        model,
        tools: { python: pythonTool({ sandbox: throwing(hostly) }) },
        prompt: 'run it',
        stopWhen: stepCountIs(3),
      });
      await expect.poll(() => warnings.length).toBe(1);
      expect(warnings[0]!.name).toBe('AiToolbeltSandboxFailure');
      expect(warnings[0]!.message).toContain('unix:///var/run/docker.sock');
    } finally {
      process.off('warning', onWarning);
    }
  });
});
