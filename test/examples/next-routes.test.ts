// The Next.js example's route handlers and proxy, called as Next calls them (a NextRequest
// in, a Response out), over the process-wide toolbelt they share: the real bundled MCP
// servers and the real notes server with its OAuth sign-in; only the model is faked.
// Other sites' pages and DNS-rebinding hosts are refused, bodies must be JSON, and a
// browser that never loaded the page creates nothing. (Built and in a browser:
// test/e2e/next-app.test.ts.)
import {
  type McpToolbox,
  McpElicitationBroker,
  connectMcpServers,
  createMcpOAuth,
} from 'ai-toolbelt/mcp';
import { NextRequest } from 'next/server.js';
import { type Storage, createStorage } from 'unstorage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMcpConfig } from '../../examples/hono-server/src/load-mcp-config.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fixtures/fake-openai/fake-openai-server.ts';
import { type NotesServer, signIn, startNotesServer } from '../mcp/sign-in.ts';
import { answerText, chatRequest, readUIChunks } from './ui-chunks.ts';

type Handler = (request: NextRequest, context?: unknown) => Promise<Response> | Response;
const app = new URL('../../examples/next-app/', import.meta.url);
// Loaded by path: the app's files use Next's extensionless imports, which this
// repository's type-check (NodeNext) does not follow; Vite resolves them.
const load = async (file: string) =>
  (await import(new URL(file, app).href)) as Record<string, Handler>;

const SITE = 'http://127.0.0.1:3000';
const at = (path: string, init: ConstructorParameters<typeof NextRequest>[1] = {}) =>
  new NextRequest(`${SITE}${path}`, init);
const json = { 'content-type': 'application/json' };

let fake: FakeOpenAI;
let notes: NotesServer;
let root: McpToolbox;
let store: Storage;
let routes: {
  chat: Handler;
  callback: Handler;
  answer: Handler;
  select: Handler;
  proxy: Handler;
};
// Every user id a route asked a per-user toolbox for.
const users: string[] = [];
const saved = { ...process.env };

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
  const config = new URL('mcp.config.json', app).pathname;
  root = await connectMcpServers({
    servers: { ...(await loadMcpConfig(config)), notes: { url: notes.url, auth: oauth } },
  });
  const forUser = root.forUser.bind(root);
  root.forUser = options => {
    users.push(options.userId);
    return forUser(options);
  };
  // What lib/toolbelt.ts would have opened on the first request (see getToolbelt).
  (globalThis as { __aiToolbelt?: unknown }).__aiToolbelt = Promise.resolve({
    toolbox: root,
    elicitations: new McpElicitationBroker(),
    closeNotes: async () => {},
    embedder: { description: 'none (lexical)', close: async () => {} },
  });
  Object.assign(process.env, {
    OPENAI_API_KEY: 'test',
    OPENAI_BASE_URL: fake.baseURL,
    PORT: '3000',
  });
  delete process.env.PUBLIC_URL;
  routes = {
    chat: (await load('app/api/chat/route.ts')).POST!,
    callback: (await load('app/api/mcp/callback/route.ts')).GET!,
    answer: (await load('app/api/mcp/elicitations/[id]/route.ts')).POST!,
    select: (await load('app/api/select/route.ts')).GET!,
    proxy: (await load('proxy.ts')).proxy!,
  };
});
afterAll(async () => {
  (globalThis as { __aiToolbelt?: unknown }).__aiToolbelt = undefined;
  process.env = saved;
  await root?.close();
  await notes?.close();
  await fake?.close();
});

const message = JSON.stringify({
  messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'spend the key' }] }],
});
const idContext = { params: Promise.resolve({ id: 'some-id' }) };

describe('requests from elsewhere', () => {
  it('answers 421 for a host it was not configured for (DNS rebinding), on every route and the page', async () => {
    const rebound = { headers: { host: 'rebind.attacker.test:3000' } };
    const select = await routes.select(at('/api/select?q=weather', rebound));
    expect(select.status).toBe(421);
    expect((await select.json()).error).toContain('rebind.attacker.test');
    expect((await routes.proxy(at('/', rebound))).status).toBe(421);
    expect((await routes.callback(at('/api/mcp/callback?code=x', rebound))).status).toBe(421);
    const chat = at('/api/chat', {
      method: 'POST',
      headers: { ...rebound.headers, ...json },
      body: message,
    });
    expect((await routes.chat(chat)).status).toBe(421);
    // Its own names answer.
    for (const host of ['127.0.0.1:3000', 'localhost:3000']) {
      expect((await routes.select(at('/api/select?q=weather', { headers: { host } }))).status).toBe(
        200,
      );
    }
  });

  it('refuses a chat turn posted by another site as text/plain, before the model is asked', async () => {
    const before = fake.requests.length;
    const post = (headers: Record<string, string>) =>
      routes.chat(
        at('/api/chat', {
          method: 'POST',
          headers: { host: '127.0.0.1:3000', ...headers },
          body: message,
        }),
      );
    const crossSite = await post({ origin: 'http://evil.test', 'content-type': 'text/plain' });
    expect(crossSite.status).toBe(403);
    expect((await crossSite.json()).error).toContain('http://evil.test');
    expect((await post({ origin: 'http://evil.test', ...json })).status).toBe(403);
    const plain = await post({ origin: SITE, 'content-type': 'text/plain' });
    expect(plain.status).toBe(415);
    expect((await plain.json()).error).toContain('application/json');
    expect(fake.requests.length).toBe(before);
  });

  it('refuses a form answer from another site or not sent as JSON', async () => {
    const answer = (headers: Record<string, string>) =>
      routes.answer(
        at('/api/mcp/elicitations/some-id', {
          method: 'POST',
          headers,
          body: '{"action":"accept"}',
        }),
        idContext,
      );
    expect((await answer({ origin: 'http://evil.test', ...json })).status).toBe(403);
    expect((await answer({ origin: SITE, 'content-type': 'text/plain' })).status).toBe(415);
  });

  it('refuses a form answer over 64 KiB with 413, declared or streamed', async () => {
    const huge = JSON.stringify({ action: 'accept', content: { text: 'x'.repeat(70 * 1024) } });
    const post = (init: ConstructorParameters<typeof NextRequest>[1]) =>
      routes.answer(
        at('/api/mcp/elicitations/some-id', {
          method: 'POST',
          ...init,
          headers: { ...json, ...(init?.headers as object) },
        }),
        idContext,
      );
    const declared = await post({ headers: { 'content-length': String(huge.length) }, body: huge });
    expect(declared.status).toBe(413);
    expect((await declared.json()).error).toContain('65536 bytes');
    // Without Content-Length (chunked), it is cut while streaming in.
    const streamed = await post({
      body: new Blob([huge]).stream(),
      duplex: 'half',
    } as ConstructorParameters<typeof NextRequest>[1]);
    expect(streamed.status).toBe(413);
    // A small answer still reaches the broker (no such form here: 404).
    expect((await post({ body: '{"action":"accept"}' })).status).toBe(404);
  });

  it('still answers its own page: a same-origin chat turn streams', async () => {
    fake.setScript([{ text: 'Hi!' }]);
    const init = chatRequest('Hello');
    const response = await routes.chat(
      at('/api/chat', { ...init, headers: { ...json, origin: SITE } } as ConstructorParameters<
        typeof NextRequest
      >[1]),
    );
    expect(response.status).toBe(200);
    expect(answerText(await readUIChunks(response))).toBe('Hi!');
  });
});

describe('the model server in the page header and the log', () => {
  it('is named by its host only, never its path or credentials', async () => {
    const model = (await import(new URL('lib/model.ts', app).href)) as {
      modelDescription(env: Record<string, string>): string;
    };
    const embedder = (await import(new URL('lib/embedder.ts', app).href)) as {
      embedderFromEnv(env: Record<string, string>): Promise<{ description: string }>;
    };
    const env = {
      OPENAI_API_KEY: 'k',
      OPENAI_BASE_URL: 'https://user:pa55@proxy.internal:8443/v1/tenant-42?token=s3cret',
    };
    expect(model.modelDescription(env)).toBe('gpt-4.1-mini at proxy.internal:8443');
    expect((await embedder.embedderFromEnv({ ...env, EMBEDDER: 'openai' })).description).toBe(
      'openai:text-embedding-3-small at proxy.internal:8443',
    );
  });
});

describe('browsers that never loaded the page', () => {
  it('create no user, toolbox or sign-in record: 50 callbacks without a cookie', async () => {
    const keysBefore = (await store.getKeys()).length;
    users.length = 0;
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => routes.callback(at('/api/mcp/callback?code=x'))),
    );
    expect(users).toHaveLength(0);
    expect((await store.getKeys()).length).toBe(keysBefore);
    expect(responses.map(response => response.status)).toEqual(responses.map(() => 400));
    expect(await responses[0]!.text()).toContain('no session');
    expect(responses.some(response => response.headers.has('set-cookie'))).toBe(false);
  });

  it('create nothing by answering a form or chatting; the chat uses the shared servers', async () => {
    users.length = 0;
    const answered = await routes.answer(
      at('/api/mcp/elicitations/x', { method: 'POST', headers: json, body: '{"action":"accept"}' }),
      idContext,
    );
    expect(answered.status).toBe(404);
    fake.setScript([{ text: 'Shared only.' }]);
    const before = fake.requests.length;
    const chat = await routes.chat(
      at(
        '/api/chat',
        chatRequest('weather in Oslo') as ConstructorParameters<typeof NextRequest>[1],
      ),
    );
    expect(answerText(await readUIChunks(chat))).toBe('Shared only.');
    expect(chat.headers.has('set-cookie')).toBe(false);
    expect(users).toEqual([]);
    expect(fake.requests[before]?.toolNames.every(name => !/note/.test(name))).toBe(true);
  });

  it('the page (proxy) issues the id once; with it the callback signs the browser in', async () => {
    const page = await routes.proxy(at('/'));
    const setCookie = page.headers.get('set-cookie')!;
    // The id, then its signature.
    expect(setCookie).toMatch(/^uid=[\w-]{36}\.[\w-]{43}; Path=\/; HttpOnly; SameSite=lax/i);
    const cookie = setCookie.split(';')[0]!;
    // A browser that has one keeps it.
    expect((await routes.proxy(at('/', { headers: { cookie } }))).headers.has('set-cookie')).toBe(
      false,
    );
    const userId = cookie.split('=')[1]!.split('.')[0]!;
    const mine = await root.forUser({ userId });
    const { code, state } = await signIn(mine.status().notes!.authorizationUrl, 'ana');
    const callback = await routes.callback(
      at(`/api/mcp/callback?code=${encodeURIComponent(code)}&state=${encodeURIComponent(state)}`, {
        headers: { cookie },
      }),
    );
    expect(callback.status).toBe(200);
    const html = await callback.text();
    expect(html).toContain('Connected to notes');
    // The page's script is a file with the server's name in data-server: the policy runs no
    // inline script.
    expect(html).toContain('data-server="notes"');
    expect(html).toContain('<script src="/mcp-callback.js"></script>');
    expect(html).not.toContain('<script>');
    expect(mine.status().notes!.state).toBe('ready');
  });

  it('a cookie the app did not sign is no user: not accepted, and the page issues a real one', async () => {
    const cookie = (await routes.proxy(at('/'))).headers.get('set-cookie')!.split(';')[0]!;
    const [id, signature] = cookie.split('=')[1]!.split('.');
    const someoneElse = 'c0ffee00-0000-4000-8000-000000000000';
    const forged = [
      `uid=${someoneElse}`, // the bare id, as the cookie used to be
      `uid=${someoneElse}.${signature}`, // another id, a real signature
      `uid=${id}.${'A'.repeat(43)}`, // a real id, a made-up signature
    ];
    users.length = 0;
    fake.setScript(forged.map(() => ({ text: 'Shared only.' })));
    for (const value of forged) {
      const callback = await routes.callback(
        at('/api/mcp/callback?code=x&state=y', { headers: { cookie: value } }),
      );
      expect(callback.status).toBe(400);
      expect(await callback.text()).toContain('no session');
      const init = chatRequest('weather in Oslo') as ConstructorParameters<typeof NextRequest>[1];
      const chat = await routes.chat(
        at('/api/chat', { ...init, headers: { ...json, cookie: value } }),
      );
      await chat.text();
      const reissued = await routes.proxy(at('/', { headers: { cookie: value } }));
      expect(reissued.headers.get('set-cookie')).toMatch(/^uid=/);
    }
    expect(users).toEqual([]);
    expect((await routes.proxy(at('/', { headers: { cookie } }))).headers.has('set-cookie')).toBe(
      false,
    );
  });
});
