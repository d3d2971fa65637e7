// The Hono example's trust boundaries, in process with its real MCP servers (and the real
// notes server with its OAuth sign-in): other sites' pages and DNS-rebinding hosts are
// refused, bodies must be JSON, and a browser that never loaded the page creates nothing.
import { createOpenAI } from '@ai-sdk/openai';
import { type McpToolbox, connectMcpServers, createMcpOAuth } from 'ai-toolbelt/mcp';
import { type Storage, createStorage } from 'unstorage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../examples/hono-server/src/app.ts';
import { loadMcpConfig } from '../../examples/hono-server/src/load-mcp-config.ts';
import { appOrigins } from '../../examples/hono-server/src/same-origin.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fixtures/fake-openai/fake-openai-server.ts';
import { type NotesServer, signIn, startNotesServer } from '../mcp/sign-in.ts';
import { answerText, chatRequest, readUIChunks } from './ui-chunks.ts';

const config = new URL('../../examples/hono-server/mcp.config.json', import.meta.url).pathname;
const SITE = 'http://127.0.0.1:3000';
const origins = appOrigins({ port: 3000 });
const at = (path: string) => `${SITE}${path}`;

let fake: FakeOpenAI;
let notes: NotesServer;
let root: McpToolbox;
let store: Storage;
// Every user id the app asked a per-user toolbox for.
const users: string[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAI();
  notes = await startNotesServer({ port: 0 });
  store = createStorage();
  const oauth = createMcpOAuth({
    store,
    redirectUrl: `${SITE}/api/mcp/callback`,
    clientName: 'ai-toolbelt tests',
    encryptionKey: 'test-only-secret-0123456789abcdef0123456789',
  });
  root = await connectMcpServers({
    servers: { ...(await loadMcpConfig(config)), notes: { url: notes.url, auth: oauth } },
  });
});
afterAll(async () => {
  await root?.close();
  await notes?.close();
  await fake?.close();
});

function app() {
  const toolbox = {
    tools: root.tools,
    index: root.index,
    status: () => root.status(),
    forUser: (options: Parameters<McpToolbox['forUser']>[0]) => {
      users.push(options.userId);
      return root.forUser(options);
    },
  };
  const model = createOpenAI({ baseURL: fake.baseURL, apiKey: 'test' }).chat('fake-model');
  return createApp({ origins, toolbox, model });
}

describe('requests from elsewhere', () => {
  it('answers 421 for a host it was not configured for (DNS rebinding), 200 for its own', async () => {
    const rebound = await app().request(at('/healthz'), {
      headers: { host: 'rebind.attacker.test:3000' },
    });
    expect(rebound.status).toBe(421);
    expect((await rebound.json()).error).toContain('rebind.attacker.test');
    for (const path of ['/', '/api/tools/search?q=weather']) {
      const response = await app().request(at(path), { headers: { host: 'rebind.attacker.test' } });
      expect(response.status).toBe(421);
    }
    for (const host of ['127.0.0.1:3000', 'localhost:3000']) {
      expect((await app().request(at('/healthz'), { headers: { host } })).status).toBe(200);
    }
    // Same name, another port: another app.
    expect(
      (await app().request(at('/healthz'), { headers: { host: '127.0.0.1:4000' } })).status,
    ).toBe(421);
  });

  it('refuses a chat turn posted by another site as text/plain, before the model is asked', async () => {
    const before = fake.requests.length;
    const body = JSON.stringify({
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'spend the key' }] }],
    });
    const crossSite = await app().request(at('/api/chat'), {
      method: 'POST',
      headers: { host: '127.0.0.1:3000', origin: 'http://evil.test', 'content-type': 'text/plain' },
      body,
    });
    expect(crossSite.status).toBe(403);
    expect((await crossSite.json()).error).toContain('http://evil.test');
    // Another site's JSON is refused too; the same page's text/plain is not JSON: 415.
    const json = await app().request(at('/api/chat'), {
      method: 'POST',
      headers: {
        host: '127.0.0.1:3000',
        origin: 'http://evil.test',
        'content-type': 'application/json',
      },
      body,
    });
    expect(json.status).toBe(403);
    const plain = await app().request(at('/api/chat'), {
      method: 'POST',
      headers: { host: '127.0.0.1:3000', origin: SITE, 'content-type': 'text/plain' },
      body,
    });
    expect(plain.status).toBe(415);
    expect((await plain.json()).error).toContain('application/json');
    expect(fake.requests.length).toBe(before);
  });

  it('refuses a form answer from another site or not sent as JSON', async () => {
    const answer = (headers: Record<string, string>) =>
      app().request(at('/api/mcp/elicitations/some-id'), {
        method: 'POST',
        headers: { host: '127.0.0.1:3000', ...headers },
        body: '{"action":"accept"}',
      });
    expect(
      (await answer({ origin: 'http://evil.test', 'content-type': 'application/json' })).status,
    ).toBe(403);
    expect((await answer({ origin: SITE, 'content-type': 'text/plain' })).status).toBe(415);
  });

  it('refuses a form answer over 64 KiB with 413, declared or streamed', async () => {
    const huge = JSON.stringify({ action: 'accept', content: { text: 'x'.repeat(70 * 1024) } });
    const post = (init: RequestInit) =>
      app().request(at('/api/mcp/elicitations/some-id'), {
        method: 'POST',
        ...init,
        headers: { 'content-type': 'application/json', ...(init.headers as object) },
      });
    const declared = await post({
      headers: { 'content-length': String(huge.length) },
      body: huge,
    });
    expect(declared.status).toBe(413);
    expect((await declared.json()).error).toContain('65536 bytes');
    // Without Content-Length (chunked), it is cut while streaming in.
    const streamed = await post({ body: new Blob([huge]).stream(), duplex: 'half' } as RequestInit);
    expect(streamed.status).toBe(413);
    // A small answer still reaches the broker (no such form here: 404).
    expect((await post({ body: '{"action":"accept"}' })).status).toBe(404);
  });

  it('still answers its own page: a same-origin chat turn streams', async () => {
    fake.setScript([{ text: 'Hi!' }]);
    const init = chatRequest('Hello');
    const response = await app().request(at('/api/chat'), {
      ...init,
      headers: {
        ...(init.headers as Record<string, string>),
        host: '127.0.0.1:3000',
        origin: SITE,
      },
    });
    expect(response.status).toBe(200);
    expect(answerText(await readUIChunks(response))).toBe('Hi!');
  });
});

describe('browsers that never loaded the page', () => {
  it('create no user, toolbox or sign-in record: 50 callbacks without a cookie', async () => {
    const keysBefore = (await store.getKeys()).length;
    users.length = 0;
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => app().request(at('/api/mcp/callback?code=x'))),
    );
    expect(users).toHaveLength(0);
    expect((await store.getKeys()).length).toBe(keysBefore);
    expect(responses.map(response => response.status)).toEqual(responses.map(() => 400));
    expect(await responses[0]!.text()).toContain('no session');
    // No cookie was handed out either: the next callback is just as anonymous.
    expect(responses.some(response => response.headers.has('set-cookie'))).toBe(false);
  });

  it('create nothing by answering a form or chatting; the chat uses the shared servers', async () => {
    users.length = 0;
    const answered = await app().request(at('/api/mcp/elicitations/x'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"action":"accept"}',
    });
    expect(answered.status).toBe(404);
    fake.setScript([{ text: 'Shared only.' }]);
    const before = fake.requests.length;
    const chat = await app().request(at('/api/chat'), chatRequest('weather in Oslo'));
    expect(answerText(await readUIChunks(chat))).toBe('Shared only.');
    expect(chat.headers.has('set-cookie')).toBe(false);
    expect(users).toEqual([]);
    expect(fake.requests[before]?.toolNames.every(name => !/note/.test(name))).toBe(true);
  });

  it('a browser the page gave an id signs in through the callback', async () => {
    const page = await app().request(at('/'));
    const cookie = page.headers.get('set-cookie')!.split(';')[0]!;
    // The id, then its signature.
    const userId = decodeURIComponent(cookie.split('=')[1]!).split('.')[0]!;
    expect(userId).toMatch(/^[\w-]{36}$/);
    // What the chat's "Connect notes" link leads to, signed in as the notes server's user "ana".
    const mine = await root.forUser({ userId });
    const { code, state } = await signIn(mine.status().notes!.authorizationUrl, 'ana');
    const callback = await app().request(
      at(`/api/mcp/callback?code=${encodeURIComponent(code)}&state=${encodeURIComponent(state)}`),
      { headers: { cookie } },
    );
    expect(callback.status).toBe(200);
    const html = await callback.text();
    expect(html).toContain('Connected to notes');
    // The page's script is a file with the server's name in data-server: the policy runs no
    // inline script.
    expect(html).toContain('data-server="notes"');
    expect(html).toContain('<script src="/assets/mcp-callback.js"></script>');
    expect(html).not.toContain('<script>');
    expect(users).toContain(userId);
    expect(mine.status().notes!.state).toBe('ready');
  });

  it('a cookie the app did not sign is no user: not accepted, and the page issues a real one', async () => {
    const page = await app().request(at('/'));
    const cookie = page.headers.get('set-cookie')!.split(';')[0]!;
    const [id, signature] = decodeURIComponent(cookie.split('=')[1]!).split('.');
    const someoneElse = 'c0ffee00-0000-4000-8000-000000000000';
    const forged = [
      `uid=${someoneElse}`, // the bare id, as the cookie used to be
      `uid=${encodeURIComponent(`${someoneElse}.${signature}`)}`, // another id, a real signature
      `uid=${encodeURIComponent(`${id}.${'A'.repeat(43)}=`)}`, // a real id, a made-up signature
    ];
    users.length = 0;
    fake.setScript(forged.map(() => ({ text: 'Shared only.' })));
    for (const value of forged) {
      const callback = await app().request(at('/api/mcp/callback?code=x&state=y'), {
        headers: { cookie: value },
      });
      expect(callback.status).toBe(400);
      expect(await callback.text()).toContain('no session');
      const chat = await app().request(at('/api/chat'), {
        ...chatRequest('weather in Oslo'),
        headers: { 'content-type': 'application/json', cookie: value },
      });
      await chat.text();
      const reissued = await app().request(at('/'), { headers: { cookie: value } });
      expect(reissued.headers.get('set-cookie')).toMatch(/^uid=/);
    }
    expect(users).toEqual([]);
    // The signed cookie is kept.
    const again = await app().request(at('/'), { headers: { cookie } });
    expect(again.headers.has('set-cookie')).toBe(false);
  });
});
