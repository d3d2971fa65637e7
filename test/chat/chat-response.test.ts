// chatResponse with real MCP servers (the examples' weather and calendar servers, a server that
// asks a form, the notes server that needs sign-in) and the real Docker + gVisor sandbox; only
// the model is scripted.
import type { UIMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatResponse, InvalidArgumentError, type ToolSelectionData } from '../../src/index.ts';
import {
  connectMcpServers,
  McpElicitationBroker,
  type McpElicitationPart,
  type McpToolbox,
} from '../../src/mcp/index.ts';
import type { PythonAttemptEvent, PythonToolOutput } from '../../src/python/index.ts';
import { DockerSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { describeWith } from '../e2e/support/describe-e2e.ts';
import { answerText, dataParts, readUIChunks } from '../examples/ui-chunks.ts';
import { scriptedModel } from '../helpers/scripted-model.ts';
import { fixture } from '../mcp/helpers.ts';
import {
  appWideProvider,
  type NotesServer,
  oauthInMemory,
  startNotesServer,
} from '../mcp/sign-in.ts';

const exampleServer = (file: string) => ({
  command: process.execPath,
  args: [new URL(`../../examples/hono-server/mcp-servers/${file}`, import.meta.url).pathname],
});
const user = (text: string, parts: UIMessage['parts'] = []): UIMessage => ({
  id: 'u1',
  role: 'user',
  parts: [...parts, { type: 'text', text }],
});

let toolbox: McpToolbox;
beforeAll(async () => {
  toolbox = await connectMcpServers({
    servers: {
      weather: exampleServer('weather-server.ts'),
      calendar: exampleServer('calendar-server.ts'),
    },
  });
});
afterAll(async () => {
  await toolbox?.close();
});

describe('chatResponse', () => {
  it('offers each model call its top-k tools and writes which, echoing at most 200 characters of the query', async () => {
    const model = scriptedModel([
      { toolCalls: [{ name: 'current_weather', input: { city: 'Oslo' } }] },
      { text: 'It is mild in Oslo.' },
    ]);
    const question = `weather in Oslo right now ${'please '.repeat(2000)}`;
    const response = await chatResponse({
      messages: [user(question)],
      model,
      tools: toolbox.tools,
      index: toolbox.index,
      topK: 2,
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const chunks = await readUIChunks(response);
    expect(answerText(chunks)).toBe('It is mild in Oslo.');

    const selections = dataParts<ToolSelectionData>(chunks, 'data-tool-selection');
    expect(selections.map(selection => selection.step)).toEqual([1, 2]);
    expect(selections[0]!.query.length).toBeLessThanOrEqual(200);
    expect(selections[0]!.query.startsWith('weather in Oslo right now')).toBe(true);
    expect(selections[0]!.dropped).toBe(8);
    // What the parts say is what each model call was given.
    expect(model.toolNamesPerCall()).toEqual(
      selections.map(selection => selection.selected.map(tool => tool.name)),
    );
    expect(model.toolNamesPerCall()[0]).toContain('current_weather');
    // The MCP tool ran (a real call), and its result went back to the model.
    const output = chunks.find(chunk => chunk.type === 'tool-output-available');
    expect(JSON.stringify(output)).toContain('Oslo');
  });

  it('keeps the model server error off the client unless onError says otherwise', async () => {
    const failing = () =>
      new MockLanguageModelV4({
        doStream: async () => {
          throw new Error('upstream refused key sk-live-1234');
        },
      });
    const options = { messages: [user('Hi')], tools: toolbox.tools, index: toolbox.index };
    const hidden = await readUIChunks(await chatResponse({ ...options, model: failing() }));
    const error = hidden.find(chunk => chunk.type === 'error');
    expect(error).toBeDefined();
    expect(JSON.stringify(hidden)).not.toContain('sk-live-1234');

    const shown = await readUIChunks(
      await chatResponse({
        ...options,
        model: failing(),
        onError: error => `model server: ${(error as Error).message}`,
      }),
    );
    expect(shown.find(chunk => chunk.type === 'error')).toEqual({
      type: 'error',
      errorText: 'model server: upstream refused key sk-live-1234',
    });
  });

  it('throws a bad option before anything streams', async () => {
    const options = {
      messages: [user('Hi')],
      model: scriptedModel([]),
      tools: toolbox.tools,
      index: toolbox.index,
    };
    await expect(chatResponse({ ...options, maxSteps: 0 })).rejects.toThrow(InvalidArgumentError);
    await expect(chatResponse({ ...options, topK: -1 })).rejects.toThrow(/topK/);
  });
});

describe('chatResponse with MCP parts', () => {
  let notes: NotesServer;
  beforeAll(async () => {
    notes = await startNotesServer({ port: 0 });
  });
  afterAll(async () => {
    await notes?.close();
  });

  it('opens the answer with a Connect card for each server waiting for the user to sign in', async () => {
    await using shared = await connectMcpServers({
      servers: { notes: { url: notes.url, auth: oauthInMemory().oauth } },
    });
    const mine = await shared.forUser({ userId: 'ana' });
    const url = mine.status().notes!.authorizationUrl;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    const chunks = await readUIChunks(
      await chatResponse({
        messages: [user('List my notes')],
        model: scriptedModel([{ text: 'Connect notes first.' }]),
        tools: mine.tools,
        index: mine.index,
        mcp: { status: mine.status(), userId: 'ana' },
      }),
    );
    expect(chunks.filter(chunk => chunk.type.startsWith('data-'))[0]).toEqual({
      type: 'data-mcp-auth',
      id: 'mcp-auth-notes',
      data: { server: 'notes', url },
    });
  });

  it('never shows an app-wide sign-in (one identity for every user) as a Connect card', async () => {
    await using app = await connectMcpServers({
      servers: { notes: { url: notes.url, auth: appWideProvider() } },
    });
    expect(app.status().notes!.authorizationUrl).toBeDefined();
    const mine = await app.forUser({ userId: 'ana' });
    // Neither the user's toolbox nor the app's own status (an app without per-user servers may
    // pass that for every user) gives a chat page the link whose state signs the whole app in.
    for (const status of [mine.status(), app.status()]) {
      const chunks = await readUIChunks(
        await chatResponse({
          messages: [user('List my notes')],
          model: scriptedModel([{ text: 'Not connected.' }]),
          tools: mine.tools,
          index: mine.index,
          mcp: { status, userId: 'ana' },
        }),
      );
      expect(chunks.filter(chunk => chunk.type === 'data-mcp-auth')).toEqual([]);
    }
  });

  it("streams a server's form while the answer runs, takes the answer back, and stops listening at the end", async () => {
    const broker = new McpElicitationBroker();
    await using forms = await connectMcpServers({
      servers: { forms: fixture('elicitation-server.ts') },
      onElicitation: broker.handler,
    });
    const response = await chatResponse({
      messages: [user('Fill in the form')],
      model: scriptedModel([{ toolCalls: [{ name: 'ask', input: {} }] }, { text: 'Thanks.' }]),
      tools: forms.tools,
      index: forms.index,
      // A shared server's forms carry no user: the broker files them under ''.
      mcp: { status: forms.status(), userId: '', elicitations: broker },
    });
    // Read as the page does, answering the form when it shows.
    const seen: McpElicitationPart[] = [];
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += value;
      for (const [, json] of value.matchAll(/data: (\{.*"data-mcp-elicitation".*\})/g)) {
        const part = (JSON.parse(json!) as { data: McpElicitationPart }).data;
        seen.push(part);
        if (part.state === 'pending')
          broker.answer({
            id: part.id,
            userId: '',
            result: { action: 'accept', content: { name: 'Grace' } },
          });
      }
    }
    expect(seen.map(part => [part.message, part.state])).toEqual([
      ['Who are you?', 'pending'],
      ['Who are you?', 'accept'],
    ]);
    expect(text).toContain('\\"name\\":\\"Grace\\"'); // the tool's result carries the answer
    // The answer ended: nobody listens for this user any more, so a new form is declined.
    const late = await broker.handler({
      mode: 'form',
      server: 'forms',
      message: 'Again?',
      requestedSchema: { type: 'object', properties: {} },
      abortSignal: new AbortController().signal,
    });
    expect(late).toEqual({ action: 'decline' });
  });
});

describeWith({}, 'chatResponse with the sandbox', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await DockerSandbox.create({ warmPoolSize: 1 });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('runs python on the attached file, streams each attempt and the repair, and pins python', async () => {
    const csv = 'region,amount\nnorth,5\nsouth,7\n';
    const read = "import pandas as pd\ndf = pd.read_csv('/tmp/inputs/sales.csv')\n";
    const model = scriptedModel([
      {
        toolCalls: [{ name: 'python', input: { code: `${read}print(int(df.amount.sum()) // 0)` } }],
      },
      { toolCalls: [{ name: 'python', input: { code: `${read}print(df.amount.sum())` } }] },
      { text: 'The total is 12.' },
    ]);
    const file = {
      type: 'file' as const,
      mediaType: 'text/csv',
      filename: 'sales.csv',
      url: `data:text/csv;base64,${Buffer.from(csv).toString('base64')}`,
    };
    const chunks = await readUIChunks(
      await chatResponse({
        messages: [user('Total amount?', [file])],
        model,
        tools: toolbox.tools,
        index: toolbox.index,
        sandbox,
        topK: 2,
        repairParts: true,
      }),
    );
    expect(model.toolNamesPerCall().every(names => names.includes('python'))).toBe(true);
    const attempts = dataParts<PythonAttemptEvent>(chunks, 'data-repair');
    expect(attempts.map(attempt => [attempt.attempt, attempt.state])).toEqual([
      [1, 'failed'],
      [2, 'success'],
    ]);
    const outputs = chunks.flatMap(chunk =>
      chunk.type === 'tool-output-available' ? [chunk.output as PythonToolOutput] : [],
    );
    const success = outputs.find(output => output.state === 'success');
    expect(success && 'stdout' in success ? success.stdout.trim() : undefined).toBe('12');
    expect(answerText(chunks)).toBe('The total is 12.');
  });
});
