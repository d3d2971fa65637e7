import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, type UIMessage, wrapLanguageModel } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolResultImagesMiddleware } from '../../src/middleware/tool-result-images-middleware.ts';
import { pythonAttachments } from '../../src/python/python-attachments.ts';
import { pythonTool } from '../../src/python/python-tool.ts';
import type { PythonAttemptEvent } from '../../src/python/python-tool-output.ts';
import type { SandboxExecuteOptions } from '../../src/sandbox/types.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fixtures/fake-openai/fake-openai-server.ts';
import { fakeSandbox } from '../helpers/fake-sandbox.ts';
import { scriptedModel } from '../helpers/scripted-model.ts';

// A 1x1 PNG (real bytes; the sandbox tests decode real charts).
const PNG_1X1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

const chartRun = () => ({
  status: 'success' as const,
  stdout: 'drawn\n',
  images: [
    { name: 'figure-1.png', mediaType: 'image/png' as const, width: 1, height: 1, data: PNG_1X1 },
  ],
  files: [{ path: 'outputs/sum.csv', mediaType: 'text/csv', data: Buffer.from('a,b\n1,2\n') }],
  notes: ['12 figures were made; only the first 10 were returned'],
});

describe('python tool: charts and files', () => {
  it('streams images and files with the result, and the model sees the chart as image content', async () => {
    const events: PythonAttemptEvent[] = [];
    const model = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'plot()' } }] },
      { text: 'Here is the chart.' },
    ]);
    const result = await generateText({
      model,
      tools: {
        python: pythonTool({ sandbox: fakeSandbox(chartRun), onAttempt: e => events.push(e) }),
      },
      prompt: 'chart it',
      stopWhen: stepCountIs(3),
    });
    const output = result.steps[0]!.toolResults[0]!.output as Record<string, unknown>;
    expect(output).toMatchObject({
      state: 'success',
      images: [
        {
          name: 'figure-1.png',
          mediaType: 'image/png',
          width: 1,
          height: 1,
          size: PNG_1X1.length,
          data: PNG_1X1.toString('base64'),
        },
      ],
      files: [
        {
          name: 'outputs/sum.csv',
          mediaType: 'text/csv',
          size: 8,
          data: Buffer.from('a,b\n1,2\n').toString('base64'),
        },
      ],
      notes: ['12 figures were made; only the first 10 were returned'],
    });
    // The timeline event carries what was made, not the bytes a second time.
    const success = events.find(e => e.state === 'success') as {
      images: object[];
      files: object[];
    };
    expect(success.images[0]).not.toHaveProperty('data');
    expect(success.files[0]).toEqual({ name: 'outputs/sum.csv', mediaType: 'text/csv', size: 8 });
    const sent = model.calls[1]!.prompt.at(-1)!;
    expect(sent).toMatchObject({
      role: 'tool',
      content: [
        {
          output: {
            type: 'content',
            value: [
              {
                type: 'text',
                text:
                  'drawn\n\n[Returned to the user: figure-1.png (1x1 PNG), outputs/sum.csv (8 B)]\n' +
                  '[Note: 12 figures were made; only the first 10 were returned]',
              },
              { type: 'file', mediaType: 'image/png', filename: 'figure-1.png' },
            ],
          },
        },
      ],
    });
  });

  it('stores artifacts through saveArtifact and passes links instead of bytes', async () => {
    const saved: string[] = [];
    const python = pythonTool({
      sandbox: fakeSandbox(chartRun),
      modelImages: false,
      saveArtifact: async ({ name, data, toolCallId }) => {
        saved.push(`${toolCallId}:${name}:${data.byteLength}`);
        return `https://files.example/${name}`;
      },
    });
    const result = await generateText({
      model: scriptedModel([
        { toolCalls: [{ name: 'python', input: { code: 'x' } }] },
        { text: 'ok' },
      ]),
      tools: { python },
      prompt: 'chart',
      stopWhen: stepCountIs(2),
    });
    const output = result.steps[0]!.toolResults[0]!.output as { images: object[]; files: object[] };
    expect(output.images[0]).toEqual({
      name: 'figure-1.png',
      mediaType: 'image/png',
      size: PNG_1X1.length,
      width: 1,
      height: 1,
      url: 'https://files.example/figure-1.png',
    });
    expect(saved).toHaveLength(2);
  });

  it("keeps no more images, files and notes than the sandbox's caps, whatever a run returned", async () => {
    const image = chartRun().images[0]!;
    const flood = () => ({
      status: 'success' as const,
      images: Array.from({ length: 1000 }, () => image),
      files: Array.from({ length: 1000 }, (_, i) => ({
        path: `outputs/f${i}`,
        mediaType: 'text/plain',
        data: Buffer.alloc(0),
      })),
      notes: Array.from({ length: 100 }, (_, i) => `note ${i}`),
    });
    const run = async (python: ReturnType<typeof pythonTool>) => {
      const model = scriptedModel([
        { toolCalls: [{ name: 'python', input: { code: 'x' } }] },
        { text: 'ok' },
      ]);
      const result = await generateText({
        model,
        tools: { python },
        prompt: 'chart',
        stopWhen: stepCountIs(2),
      });
      const output = result.steps[0]!.toolResults[0]!.output as {
        images: object[];
        files: object[];
        notes: string[];
      };
      return { output, toModel: JSON.stringify(model.calls[1]!.prompt.at(-1)) };
    };
    const sandbox = Object.assign(fakeSandbox(flood), { maxImages: 3, maxOutputFiles: 4 });
    const { output, toModel } = await run(pythonTool({ sandbox }));
    expect([output.images.length, output.files.length]).toEqual([3, 4]);
    expect(output.notes).toHaveLength(23);
    expect(output.notes.slice(20)).toEqual([
      'the sandbox returned 1000 images; only the first 3 were kept',
      'the sandbox returned 1000 files; only the first 4 were kept',
      'the sandbox returned 100 notes; only the first 20 were kept',
    ]);
    expect(toModel.match(/"mediaType":"image\/png"/g)).toHaveLength(3);

    // Without caps on the sandbox, the defaults (10 images, 20 files) hold, before saving.
    const saved: string[] = [];
    const saving = pythonTool({
      sandbox: fakeSandbox(flood),
      modelImages: false,
      saveArtifact: async ({ name }) => {
        saved.push(name);
        return `https://files.example/${saved.length}`;
      },
    });
    const defaults = (await run(saving)).output;
    expect([defaults.images.length, defaults.files.length, saved.length]).toEqual([10, 20, 30]);
  });

  it('names the packages and input files in its description, and places the files', async () => {
    const seen: SandboxExecuteOptions[] = [];
    const sandbox = Object.assign(
      fakeSandbox(() => ({ stdout: '' })),
      {
        packages: ['sympy==1.11.1', 'pandas==1.5.3', 'cycler==0.11.0'],
      },
    );
    const execute = sandbox.execute.bind(sandbox);
    sandbox.execute = async (code, options) => {
      seen.push(options!);
      return execute(code, options);
    };
    const python = pythonTool({
      sandbox,
      files: async () => [{ path: 'inputs/a.csv', data: 'x\n1\n' }],
    });
    expect(python.description).toContain(
      'Installed Python packages: pandas 1.5.3, sympy 1.11.1, cycler 0.11.0.',
    );
    expect(python.description).toContain('/tmp/inputs/');
    await generateText({
      model: scriptedModel([
        { toolCalls: [{ name: 'python', input: { code: 'x' } }] },
        { text: 'ok' },
      ]),
      tools: { python },
      prompt: 'go',
      stopWhen: stepCountIs(2),
    });
    expect(seen[0]!.files).toEqual([{ path: 'inputs/a.csv', data: 'x\n1\n' }]);
  });

  it('turns chat attachments into input files and tells the model where they are', async () => {
    const csv = 'region,amount\nnorth,3\n';
    const messages: UIMessage[] = [
      {
        id: 'u1',
        role: 'user',
        parts: [
          { type: 'text', text: 'Sum this' },
          {
            type: 'file',
            mediaType: 'text/csv',
            filename: '../sales.csv',
            url: `data:text/csv;base64,${Buffer.from(csv).toString('base64')}`,
          },
          {
            type: 'file',
            mediaType: 'text/csv',
            filename: 'sales.csv',
            url: 'data:text/csv,a%2Cb',
          },
          {
            type: 'file',
            mediaType: 'image/png',
            url: `data:image/png;base64,${PNG_1X1.toString('base64')}`,
          },
        ],
      },
    ];
    const { messages: out, files } = await pythonAttachments({ messages });
    expect(files.map(file => [file.path, Buffer.from(file.data as Uint8Array).toString()])).toEqual(
      [
        ['inputs/sales.csv', csv],
        ['inputs/sales-2.csv', 'a,b'],
        ['inputs/file.png', PNG_1X1.toString()],
      ],
    );
    expect(out[0]!.parts.map(part => part.type)).toEqual(['text', 'text', 'text', 'file', 'text']);
    expect(out[0]!.parts[1]).toEqual({
      type: 'text',
      text: '[Attached file sales.csv (text/csv, 22 B): python can read it at /tmp/inputs/sales.csv]',
    });
    const tooBig = await pythonAttachments({ messages, maxBytes: 10 });
    expect(tooBig.files.map(file => file.path)).toEqual(['inputs/sales-2.csv']);
  });
});

describe('toolResultImagesMiddleware over HTTP', () => {
  let fake: FakeOpenAI;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
  });
  afterAll(async () => {
    await fake.close();
  });

  const run = async (
    pick: (p: ReturnType<typeof createOpenAI>) => Parameters<typeof wrapLanguageModel>[0]['model'],
  ) => {
    fake.setScript([
      { toolCalls: [{ name: 'python', args: { code: 'plot()' } }] },
      { text: 'done' },
    ]);
    const before = fake.requests.length;
    const openai = createOpenAI({ baseURL: fake.baseURL, apiKey: 'test' });
    await generateText({
      model: wrapLanguageModel({ model: pick(openai), middleware: toolResultImagesMiddleware() }),
      tools: { python: pythonTool({ sandbox: fakeSandbox(chartRun) }) },
      prompt: 'chart',
      stopWhen: stepCountIs(3),
    });
    return JSON.stringify(fake.requests.slice(before).at(-1)!.body);
  };

  it('sends a text stand-in, not base64, to a Chat Completions model', async () => {
    const body = await run(p => p.chat('m'));
    expect(body).not.toContain(PNG_1X1.toString('base64'));
    expect(body).toContain('figure-1.png (image/png) was shown to the user');
    expect(body).toContain('[Returned to the user: figure-1.png (1x1 PNG)');
  });

  it('sends the image itself to a Responses API model', async () => {
    const body = await run(p => p.responses('m'));
    expect(body).toContain(
      `"type":"input_image","image_url":"data:image/png;base64,${PNG_1X1.toString('base64')}"`,
    );
  });
});
