// A notes MCP server that needs sign-in, with its own little OAuth 2.1
// authorization server, so the example shows the whole "Connect" flow
// offline: protected-resource metadata, authorization-server metadata,
// dynamic client registration, PKCE (S256), refresh tokens, scopes, and a
// consent page. Each user sees only their own notes; `add_note` asks for a
// title and colour through MCP elicitation. In-memory and for local use only.
//
//   NOTES_PORT=4000 node mcp-servers/notes-server.ts   # prints {"url": "http://127.0.0.1:4000/mcp"}
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono } from 'hono';
import { consentPage } from './notes-consent-page.ts';
import { registerNoteTools } from './notes-tools.ts';

/** Options of {@link startNotesServer}. */
export type NotesServerOptions = {
  /** 0 picks a free port. */
  port?: number;
  /** Lifetime of an access token; refresh tokens do not expire. */
  accessTokenTtlSec?: number;
  /** Scope the 401 asks for; `notes:read` alone makes `add_note` need a step-up. */
  challengeScope?: string;
};

/** A running notes server. */
export type NotesServer = {
  /** The MCP endpoint. */
  url: string;
  /** Revokes every token of a user (access and refresh): they must sign in again. */
  revoke(user: string): void;
  /** Makes every current access token of a user expired (refresh still works). */
  expire(user: string): void;
  /** Token requests served, e.g. `{ grant: 'refresh_token', user: 'ada' }`. */
  grants: { grant: string; user: string }[];
  /** Clients registered dynamically. */
  registrations(): number;
  close(): Promise<void>;
};

type Client = { id: string; secret?: string; redirectUris: string[]; authMethod: string };
type Grant = { user: string; scope: string; clientId: string };
type Code = Grant & { redirectUri: string; challenge: string; expiresAt: number };
type Access = Grant & { expiresAt: number };

const SCOPES = ['notes:read', 'notes:write'];
const token = () => randomBytes(24).toString('base64url');

/**
 * Starts the notes server (authorization server and MCP endpoint on one
 * origin) on 127.0.0.1.
 *
 * @example
 * ```ts
 * const notes = await startNotesServer({ port: 0 });
 * const servers = { notes: { url: notes.url, auth: oauth } };
 * ```
 */
export async function startNotesServer({
  port = 0,
  accessTokenTtlSec = 3600,
  challengeScope = SCOPES.join(' '),
}: NotesServerOptions = {}): Promise<NotesServer> {
  const clients = new Map<string, Client>();
  const codes = new Map<string, Code>();
  const access = new Map<string, Access>();
  const refresh = new Map<string, Grant>();
  const notes = new Map<string, { title: string; text: string; color: string }[]>();
  const sessions = new Map<
    string,
    { user: string; transport: WebStandardStreamableHTTPServerTransport }
  >();
  const grants: NotesServer['grants'] = [];
  let origin = '';

  const app = new Hono();
  const protectedResource = () => ({
    resource: `${origin}/mcp`,
    authorization_servers: [origin],
    scopes_supported: SCOPES,
    bearer_methods_supported: ['header'],
  });
  app.get('/.well-known/oauth-protected-resource/mcp', c => c.json(protectedResource()));
  app.get('/.well-known/oauth-protected-resource', c => c.json(protectedResource()));
  app.get('/.well-known/oauth-authorization-server', c =>
    c.json({
      issuer: origin,
      authorization_endpoint: `${origin}/authorize`,
      token_endpoint: `${origin}/token`,
      registration_endpoint: `${origin}/register`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      scopes_supported: SCOPES,
    }),
  );

  app.post('/register', async c => {
    const body: Record<string, unknown> = await c.req.json().catch(() => ({}));
    const redirectUris = body.redirect_uris;
    if (!Array.isArray(redirectUris) || redirectUris.length === 0)
      return c.json({ error: 'invalid_redirect_uri' }, 400);
    const authMethod = String(body.token_endpoint_auth_method ?? 'client_secret_basic');
    const client: Client = {
      id: randomUUID(),
      redirectUris: redirectUris.map(String),
      authMethod,
      ...(authMethod === 'none' ? {} : { secret: token() }),
    };
    clients.set(client.id, client);
    return c.json(
      {
        ...body,
        client_id: client.id,
        ...(client.secret ? { client_secret: client.secret } : {}),
        client_id_issued_at: Math.floor(Date.now() / 1000),
        token_endpoint_auth_method: authMethod,
      },
      201,
    );
  });

  // GET shows the consent page; `login=<user>` approves at once (scripts, tests).
  app.on(['GET', 'POST'], '/authorize', async c => {
    const params =
      c.req.method === 'GET'
        ? new URLSearchParams(c.req.url.split('?')[1] ?? '')
        : new URLSearchParams((await c.req.parseBody()) as Record<string, string>);
    const client = clients.get(params.get('client_id') ?? '');
    const redirectUri = params.get('redirect_uri') ?? '';
    if (client === undefined || !client.redirectUris.includes(redirectUri))
      return c.text('Unknown client or redirect_uri.', 400);
    const back = new URL(redirectUri);
    const state = params.get('state');
    if (state !== null) back.searchParams.set('state', state);
    back.searchParams.set('iss', origin);
    const challenge = params.get('code_challenge');
    if (
      params.get('response_type') !== 'code' ||
      !challenge ||
      params.get('code_challenge_method') !== 'S256'
    ) {
      back.searchParams.set('error', 'invalid_request');
      return c.redirect(back.href);
    }
    const user = params.get('login')?.trim();
    if (!user) {
      if (c.req.method === 'POST') back.searchParams.set('error', 'access_denied');
      return c.req.method === 'POST' ? c.redirect(back.href) : c.html(consentPage(params));
    }
    const scope = (params.get('scope') ?? SCOPES.join(' '))
      .split(' ')
      .filter(s => SCOPES.includes(s))
      .join(' ');
    const code = token();
    codes.set(code, {
      user,
      scope,
      clientId: client.id,
      redirectUri,
      challenge,
      expiresAt: Date.now() + 60_000,
    });
    back.searchParams.set('code', code);
    return c.redirect(back.href);
  });

  app.post('/token', async c => {
    const form = (await c.req.parseBody()) as Record<string, string>;
    const basic = c.req.header('authorization')?.match(/^Basic (.+)$/)?.[1];
    const [basicId, basicSecret] = basic
      ? Buffer.from(basic, 'base64').toString().split(':').map(decodeURIComponent)
      : [];
    const client = clients.get(basicId ?? form.client_id ?? '');
    const secret = basicSecret ?? form.client_secret;
    if (client === undefined || (client.secret !== undefined && client.secret !== secret))
      return c.json({ error: 'invalid_client' }, 401);
    let grant: Grant | undefined;
    if (form.grant_type === 'authorization_code') {
      const code = codes.get(form.code ?? '');
      codes.delete(form.code ?? '');
      const verifier = form.code_verifier ?? '';
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      if (
        code !== undefined &&
        code.expiresAt > Date.now() &&
        code.clientId === client.id &&
        code.redirectUri === form.redirect_uri &&
        code.challenge === challenge
      )
        grant = { user: code.user, scope: code.scope, clientId: client.id };
    } else if (form.grant_type === 'refresh_token') {
      const previous = refresh.get(form.refresh_token ?? '');
      refresh.delete(form.refresh_token ?? ''); // rotated: each refresh token works once
      if (previous?.clientId === client.id) grant = previous;
    } else return c.json({ error: 'unsupported_grant_type' }, 400);
    if (grant === undefined) return c.json({ error: 'invalid_grant' }, 400);
    grants.push({ grant: form.grant_type, user: grant.user });
    const accessToken = token();
    const refreshToken = token();
    access.set(accessToken, { ...grant, expiresAt: Date.now() + accessTokenTtlSec * 1000 });
    refresh.set(refreshToken, grant);
    return c.json({
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: accessTokenTtlSec,
      refresh_token: refreshToken,
      scope: grant.scope,
    });
  });

  app.all('/mcp', async c => {
    const challenge = (error?: string) =>
      `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp", scope="${challengeScope}"` +
      (error ? `, error="${error}"` : '');
    const bearer = c.req.header('authorization')?.match(/^Bearer (.+)$/)?.[1];
    if (bearer === undefined)
      return c.json({ error: 'invalid_token' }, 401, { 'WWW-Authenticate': challenge() });
    const grant = access.get(bearer);
    if (grant === undefined || grant.expiresAt <= Date.now())
      return c.json({ error: 'invalid_token' }, 401, {
        'WWW-Authenticate': challenge('invalid_token'),
      });
    const body = c.req.method === 'POST' ? await c.req.json().catch(() => undefined) : undefined;
    const calls = (Array.isArray(body) ? body : [body]).filter(m => m?.method === 'tools/call');
    if (
      calls.some(m => m.params?.name === 'add_note') &&
      !grant.scope.split(' ').includes('notes:write')
    ) {
      const header = `Bearer error="insufficient_scope", scope="notes:read notes:write", resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`;
      return c.json({ error: 'insufficient_scope' }, 403, { 'WWW-Authenticate': header });
    }
    const sessionId = c.req.header('mcp-session-id');
    let session = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (sessionId !== undefined && (session === undefined || session.user !== grant.user))
      return c.json(
        { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null },
        404,
      );
    if (session === undefined) {
      const user = grant.user;
      const transport: WebStandardStreamableHTTPServerTransport =
        new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: id => void sessions.set(id, { user, transport }),
          onsessionclosed: id => void sessions.delete(id),
        });
      const server = new McpServer({ name: 'notes', version: '1.0.0' });
      if (!notes.has(user)) notes.set(user, []);
      registerNoteTools({ server, user, notes: notes.get(user)! });
      await server.connect(transport);
      session = { user, transport };
    }
    return session.transport.handleRequest(c.req.raw, {
      ...(body === undefined ? {} : { parsedBody: body }),
      authInfo: { token: bearer, clientId: grant.clientId, scopes: grant.scope.split(' ') },
    });
  });

  const http = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' });
  await new Promise<void>((resolve, reject) => {
    http.once('listening', resolve);
    http.once('error', reject);
  });
  origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const forUser = <T extends { user: string }>(map: Map<string, T>, user: string) =>
    [...map].filter(([, value]) => value.user === user).map(([key]) => key);
  return {
    url: `${origin}/mcp`,
    grants,
    registrations: () => clients.size,
    revoke(user) {
      for (const key of forUser(access, user)) access.delete(key);
      for (const key of forUser(refresh, user)) refresh.delete(key);
    },
    expire(user) {
      for (const key of forUser(access, user)) access.get(key)!.expiresAt = 0;
    },
    async close() {
      await Promise.all([...sessions.values()].map(session => session.transport.close()));
      const closed = new Promise<void>(resolve => http.close(() => resolve()));
      (http as import('node:http').Server).closeAllConnections();
      await closed;
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const notes = await startNotesServer({
    port: Number(process.env.NOTES_PORT ?? 0),
    ...(process.env.CHALLENGE_SCOPE ? { challengeScope: process.env.CHALLENGE_SCOPE } : {}),
  });
  process.stdout.write(`${JSON.stringify({ url: notes.url })}\n`);
  const stop = () => void notes.close().then(() => process.exit(0));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, stop);
  // Started by an app with a stdin pipe: end with it, even if the app is killed.
  if (process.env.NOTES_EXIT_WITH_STDIN === '1') process.stdin.on('end', stop).resume();
}
