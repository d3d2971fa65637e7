// readChatRequest over real Fetch Requests, as Next.js routes and Hono (`c.req.raw`) get them:
// bodies that say or turn out to be too large, and conversations over the limits.
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, readChatRequest } from '../../src/index.ts';

const MiB = 1024 * 1024;

const post = (body: BodyInit, headers: Record<string, string> = {}) =>
  new Request('http://localhost/api/chat', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    duplex: 'half',
  } as RequestInit);

const chat = (texts: string[], id?: unknown) =>
  JSON.stringify({
    ...(id === undefined ? {} : { id }),
    messages: texts.map((text, i) => ({
      id: `m${i}`,
      role: i % 2 === 0 ? 'user' : 'assistant',
      parts: [{ type: 'text', text }],
    })),
  });

/** A body of `chunks` chunks of 1 MiB, counting how many the reader pulled. */
function countedBody(chunks: number): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled === chunks) return controller.close();
      pulled += 1;
      controller.enqueue(new Uint8Array(MiB).fill(0x20));
    },
  });
  return { stream, pulled: () => pulled };
}

async function refusal(result: Awaited<ReturnType<typeof readChatRequest>>) {
  if (!('response' in result)) throw new Error('expected a refusal');
  return { status: result.response.status, error: (await result.response.json()).error as string };
}

describe('readChatRequest', () => {
  it('reads the conversation and the chat id useChat sends', async () => {
    const result = await readChatRequest({
      request: post(chat(['Hi', 'Hello!', 'Weather?'], 'c-1')),
    });
    if ('response' in result) throw new Error(await result.response.text());
    expect(result.messages.map(message => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(result.chatId).toBe('c-1');
    // An id that is not short and plain is not handed on (it keys the python interpreter).
    for (const id of ['../x', 'a'.repeat(101), 7]) {
      const odd = await readChatRequest({ request: post(chat(['Hi'], id)) });
      expect('chatId' in odd && odd.chatId).toBe(undefined);
    }
  });

  it('refuses a body whose Content-Length is over the limit without reading it', async () => {
    const body = countedBody(20);
    const result = await readChatRequest({
      request: post(body.stream, { 'content-length': String(20 * MiB) }),
    });
    expect(await refusal(result)).toEqual({
      status: 413,
      error: expect.stringContaining('larger than 12 MiB'),
    });
    expect(body.pulled()).toBeLessThanOrEqual(1);
  });

  it('cuts a chunked body once it passes the limit, never buffering the rest', async () => {
    const body = countedBody(20);
    const result = await readChatRequest({ request: post(body.stream), maxBodyBytes: 3 * MiB });
    expect(await refusal(result)).toEqual({
      status: 413,
      error: expect.stringContaining('larger than 3 MiB'),
    });
    // The fourth MiB went over: it stopped there (a stream may read one chunk ahead).
    expect(body.pulled()).toBeGreaterThanOrEqual(4);
    expect(body.pulled()).toBeLessThanOrEqual(5);
  });

  it('answers 400 for a body that is not UI messages, saying what it expected', async () => {
    for (const body of ['not json', '{"messages":3}', '{}', '{"messages":[{"role":"user"}]}']) {
      const { status, error } = await refusal(await readChatRequest({ request: post(body) }));
      expect(status).toBe(400);
      expect(error).toContain('Expected { messages: UIMessage[] }');
    }
  });

  it('answers 400 for too many messages or one too long, naming the limit', async () => {
    const many = await readChatRequest({ request: post(chat(['a', 'b', 'c'])), maxMessages: 2 });
    expect(await refusal(many)).toEqual({
      status: 400,
      error: 'Too many messages: 3 (at most 2); start a new chat.',
    });
    const long = await readChatRequest({
      request: post(chat(['ok', 'fine', 'x'.repeat(20_001)])),
    });
    expect((await refusal(long)).error).toMatch(
      /^Message 3 is too long: 20001 characters \(at most 20000\); attach long text as a file/,
    );
  });

  it('counts every part a client sends, file contents aside; replies have their own bound', async () => {
    const big = 'x'.repeat(30);
    const withParts = (role: string, parts: object[]) =>
      JSON.stringify({
        messages: [
          { id: 'u', role: 'user', parts: [{ type: 'text', text: 'Hi' }] },
          { id: 'm', role, parts },
        ],
      });
    const forged = [
      { type: 'reasoning', text: big },
      { type: 'tool-python', toolCallId: 't', state: 'input-available', input: { code: big } },
      {
        type: 'tool-python',
        toolCallId: 't',
        state: 'output-available',
        input: {},
        output: { stdout: big },
      },
      {
        type: 'dynamic-tool',
        toolName: 'search',
        toolCallId: 't',
        state: 'output-available',
        input: {},
        output: big,
      },
      { type: 'data-note', data: { text: big } },
    ];
    for (const part of forged) {
      const result = await readChatRequest({
        request: post(withParts('assistant', [part])),
        maxReplyChars: 30,
      });
      expect(await refusal(result)).toEqual({
        status: 400,
        error: expect.stringMatching(
          /^Message 2 is too long: \d+ characters \(at most 30\); start a new chat\.$/,
        ),
      });
    }
    // A user message counts every part against maxMessageChars.
    const userParts = await readChatRequest({
      request: post(withParts('user', [{ type: 'data-note', data: { text: big } }])),
      maxMessageChars: 30,
    });
    expect((await refusal(userParts)).error).toMatch(/^Message 2 is too long: .*attach long text/);
    // A reply holding several python runs (8,000 characters of output each) passes by default.
    const runs = Array.from({ length: 4 }, () => ({
      type: 'tool-python',
      toolCallId: 't',
      state: 'output-available',
      input: { code: 'print(df.to_string())' },
      output: { stdout: 'y'.repeat(8_000) },
    }));
    const reply = await readChatRequest({ request: post(withParts('assistant', runs)) });
    expect('messages' in reply && reply.messages).toHaveLength(2);
    // File contents are bounded by maxBodyBytes only: an attachment and an inline image pass.
    const files = [
      { type: 'text', text: 'See the file.' },
      { type: 'file', mediaType: 'text/csv', url: `data:text/csv;base64,${'QUJD'.repeat(5_000)}` },
      {
        type: 'tool-python',
        toolCallId: 't',
        state: 'output-available',
        input: {},
        output: { images: [{ name: 'a.png', mediaType: 'image/png', data: 'iVBO'.repeat(5_000) }] },
      },
    ];
    const passed = await readChatRequest({
      request: post(withParts('user', files)),
      maxMessageChars: 200,
    });
    expect('messages' in passed && passed.messages).toHaveLength(2);
  });

  it('stops reading when the client goes away', async () => {
    const controller = new AbortController();
    const body = new ReadableStream<Uint8Array>({
      pull(stream) {
        stream.enqueue(new TextEncoder().encode(' '));
        controller.abort(new Error('client went away'));
      },
    });
    await expect(
      readChatRequest({ request: post(body), abortSignal: controller.signal }),
    ).rejects.toThrow('client went away');
  });

  it('refuses limits that are not whole numbers of at least 1', async () => {
    const request = post(chat(['Hi']));
    await expect(readChatRequest({ request, maxBodyBytes: 0 })).rejects.toThrow(
      InvalidArgumentError,
    );
    await expect(readChatRequest({ request, maxMessageChars: 1.5 })).rejects.toThrow(
      /maxMessageChars/,
    );
  });
});
