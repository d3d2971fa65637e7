import { generateText, stepCountIs, wrapLanguageModel } from 'ai';
import { expect, it } from 'vitest';
import { repairGuardMiddleware } from '../../src/middleware/repair-guard-middleware.ts';
import Docker from 'dockerode';
import { UNAVAILABLE_MESSAGE, pythonTool } from '../../src/python/python-tool.ts';
import { DockerSandbox, SandboxUnavailableError } from '../../src/sandbox/index.ts';
import { errorTexts, repairDecisions, scriptedModel } from '../helpers/scripted-model.ts';
import { recordFlood } from '../sandbox/record-flood.ts';
import {
  SANDBOX_IMAGE,
  describeSandbox,
  docker,
  suiteSandbox,
} from '../sandbox/sandbox-availability.ts';

// The python tool and its repair loop against the real Docker + gVisor sandbox:
// real CPython tracebacks, real timeouts. Only the language model is scripted.
describeSandbox('python tool on the real sandbox', () => {
  let sandbox: DockerSandbox;

  suiteSandbox({ warmPoolSize: 2, preimport: [] }, created => {
    sandbox = created;
  });

  it('agent mode: the model sees the real traceback, fixes the code, and gets stdout', async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          {
            name: 'python',
            input: { code: 'temps = [12, 15, 18]\nprint(sum(temps) / len(high))' },
          },
        ],
      },
      {
        toolCalls: [
          {
            name: 'python',
            input: { code: 'temps = [12, 15, 18]\nprint(sum(temps) / len(temps))' },
          },
        ],
      },
      { text: 'The mean is 15.0' },
    ]);
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: repairGuardMiddleware() }),
      tools: { python: pythonTool({ sandbox }) },
      prompt: 'mean temperature?',
      stopWhen: stepCountIs(5),
    });
    const [error] = errorTexts(model);
    expect(error).toMatch(
      /^Traceback \(most recent call last\):\n {2}File ".*", line 2, in <module>\n/,
    );
    expect(error).toMatch(/NameError: name 'high' is not defined$/);
    expect(result.steps[1]!.toolResults[0]!.output).toMatchObject({
      state: 'success',
      attempt: 2,
      stdout: '15.0\n',
    });
    expect(result.text).toBe('The mean is 15.0');
  });

  it('halts on a repeated real error even when its line moves', async () => {
    const model = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'print(1 / 0)' } }] },
      { toolCalls: [{ name: 'python', input: { code: 'x = 0\n\nprint(1 / x)' } }] },
      { text: 'Division by zero.' },
    ]);
    await generateText({
      model: wrapLanguageModel({ model, middleware: repairGuardMiddleware() }),
      tools: { python: pythonTool({ sandbox }) },
      prompt: 'divide',
      stopWhen: stepCountIs(5),
    });
    const errors = errorTexts(model);
    expect(errors).toHaveLength(2);
    expect(errors[1]).toContain('ZeroDivisionError: division by zero');
    expect(repairDecisions(model)).toEqual(['repair:repairable', 'halt:repeated-error']);
    expect(model.toolNamesPerCall()[2]).toEqual([]);
  });

  it('does not repair a real timeout, and the loop is killed', async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          { name: 'python', input: { code: 'print("start", flush=True)\nwhile True: pass' } },
        ],
      },
      { text: 'too slow' },
    ]);
    const started = Date.now();
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: repairGuardMiddleware() }),
      tools: { python: pythonTool({ sandbox, timeoutMs: 1_500 }) },
      prompt: 'loop',
      stopWhen: stepCountIs(5),
    });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(errorTexts(model)).toEqual([
      'Timed out after 1500 ms and was stopped.\nIts last output:\nstart',
    ]);
    expect(result.text).toBe('too slow');
  });

  it('inline mode: a repair model fixes real code', async () => {
    const repairModel = scriptedModel([
      { text: 'Fixed:\n```python\nimport math\nprint(math.sqrt(16))\n```' },
    ]);
    const main = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'print(math.sqrt(16))' } }] },
      { text: '4.0' },
    ]);
    const result = await generateText({
      model: main,
      tools: { python: pythonTool({ sandbox, repair: { model: repairModel } }) },
      prompt: 'sqrt 16',
      stopWhen: stepCountIs(3),
    });
    expect(JSON.stringify(repairModel.calls[0]!.prompt)).toContain(
      "NameError: name 'math' is not defined",
    );
    expect(result.steps[0]!.toolResults[0]!.output).toMatchObject({
      state: 'success',
      attempts: 2,
      stdout: '4.0\n',
    });
  });

  it('a forged flood of fake PNGs reaches neither saveArtifact nor the model', async () => {
    const saved: string[] = [];
    const model = scriptedModel([
      {
        toolCalls: [
          { name: 'python', input: { code: recordFlood({ kind: 'image', count: 100_000 }) } },
        ],
      },
      { text: 'stopped' },
    ]);
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: repairGuardMiddleware() }),
      tools: {
        python: pythonTool({
          sandbox,
          timeoutMs: 30_000,
          saveArtifact: async ({ name }) => {
            saved.push(name);
            return 'https://files.example/x';
          },
        }),
      },
      prompt: 'draw',
      stopWhen: stepCountIs(3),
    });
    expect(result.steps[0]!.toolResults[0]!.output).toMatchObject({
      state: 'failed',
      status: 'output-limit',
    });
    expect(saved).toEqual([]);
    expect(errorTexts(model)[0]).toMatch(/^Printed more output, or returned more figures or files/);
    const toolMessage = JSON.stringify(model.calls[1]!.prompt.at(-1));
    expect(toolMessage).toContain('output-limit');
    expect(toolMessage).not.toContain('"type":"file"');
  }, 60_000);

  it('an engine that is not there: the model reads a host-free line, the app the typed error', async () => {
    const missing = new DockerSandbox({
      docker: new Docker({ socketPath: '/tmp/ai-toolbelt-no-such-docker.sock' }),
      image: SANDBOX_IMAGE,
      warmPoolSize: 0,
    });
    const causes: unknown[] = [];
    const model = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'print(1)' } }] },
      { text: 'down' },
    ]);
    try {
      await generateText({
        model,
        tools: {
          python: pythonTool({ sandbox: missing, onError: ({ cause }) => void causes.push(cause) }),
        },
        prompt: 'run it',
        stopWhen: stepCountIs(3),
      });
    } finally {
      await missing.close().catch(() => {});
    }
    const [text] = errorTexts(model);
    expect(text).toBe(UNAVAILABLE_MESSAGE);
    expect(text).not.toMatch(/docker|\/tmp|\.sock|sudo|scripts\//i);
    expect(SandboxUnavailableError.isInstance(causes[0])).toBe(true);
    expect((causes[0] as Error).message).toContain('/tmp/ai-toolbelt-no-such-docker.sock');
  });
});
