import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  connectMcpServers,
  createMcpOAuth,
  McpAuthorizationError,
  type McpAuthorizationRequest,
  type McpToolbox,
} from '../../src/mcp/index.ts';
import { callOptions, eventRecorder, fixture, waitFor } from './helpers.ts';
import {
  appWideProvider,
  type NotesServer,
  oauthInMemory,
  rawStore,
  signIn,
  startNotesServer,
} from './sign-in.ts';

type Output = { content: { type: string; text: string }[] };
const call = async (toolbox: McpToolbox, name: string, args: object = {}) => {
  const tool = toolbox.tools[name];
  if (tool === undefined) throw new Error(`no tool ${name}`);
  return ((await tool.execute!(args, callOptions())) as Output).content[0]!.text;
};

let notes: NotesServer;
const open: McpToolbox[] = [];
beforeAll(async () => {
  notes = await startNotesServer();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map(toolbox => toolbox.close()));
});
afterAll(() => notes?.close());

async function signedIn(user: string) {
  const { store, oauth } = oauthInMemory();
  const recorder = eventRecorder();
  const requests: McpAuthorizationRequest[] = [];
  const toolbox = await connectMcpServers({
    servers: {
      behaviour: fixture('behaviour-server.ts'),
      notes: { url: notes.url, auth: oauth },
    },
    userId: user,
    onEvent: recorder.onEvent,
    onAuthorizationRequired: request => requests.push(request),
    onElicitation: () => ({ action: 'accept' }),
    reconnect: { initialDelayMs: 20, maxDelayMs: 50 },
  });
  open.push(toolbox);
  return { toolbox, store, oauth, recorder, requests };
}

describe('sign-in to MCP servers', () => {
  it('reports a server that needs sign-in as needs-auth while the others work, then finishes the sign-in in one call', async () => {
    const { toolbox, store, recorder, requests } = await signedIn('ada');
    const status = toolbox.status();
    expect(status.behaviour!.state).toBe('ready');
    expect(status.notes!.state).toBe('needs-auth');
    expect(status.notes!.userId).toBe('ada');
    const url = status.notes!.authorizationUrl!;
    expect(url).toMatch(/\/authorize\?.*code_challenge_method=S256/);
    expect(requests).toEqual([{ server: 'notes', userId: 'ada', url }]);
    expect(toolbox.tools.echo).toBeDefined();
    expect(toolbox.tools.whoami).toBeUndefined();
    expect(await call(toolbox, 'echo', { hi: 1 })).toBe('{"hi":1}');

    const { code, state } = await signIn(url, 'ada');
    const finished = await toolbox.finishAuth({ code, state });
    expect(finished).toMatchObject({ name: 'notes', state: 'ready', tools: 4 });
    expect(finished.authorizationUrl).toBeUndefined();
    expect(await call(toolbox, 'whoami')).toBe('Signed in to notes as ada.');
    expect(toolbox.index.names()).toContain('whoami');
    expect(recorder.events).toContainEqual(
      expect.objectContaining({ type: 'authorized', server: 'notes', userId: 'ada' }),
    );

    // The callback works once; a replay is refused.
    const replay = await toolbox.finishAuth({ code, state }).catch((e: unknown) => e);
    expect(McpAuthorizationError.isInstance(replay)).toBe(true);
    expect(replay).toMatchObject({ reason: 'invalid-state' });

    // Tokens are sealed in the store and never appear in status or events.
    const raw = await rawStore(store);
    expect(raw).toContain('"v":2,"kid":');
    expect(raw).not.toMatch(/access_token|refresh_token|code_verifier/);
    expect(JSON.stringify(toolbox.status())).not.toMatch(/access_token|Bearer/);
    expect(JSON.stringify(recorder.events)).not.toMatch(/access_token|Bearer/);
  });

  it('refreshes an expired access token without asking the user', async () => {
    const { toolbox, requests } = await signedIn('bea');
    await toolbox.finishAuth(await signIn(toolbox.status().notes!.authorizationUrl, 'bea'));
    const refreshesBefore = notes.grants.filter(
      g => g.user === 'bea' && g.grant === 'refresh_token',
    );
    expect(refreshesBefore).toHaveLength(0);

    notes.expire('bea');
    expect(await call(toolbox, 'whoami')).toBe('Signed in to notes as bea.');
    expect(notes.grants).toContainEqual({ grant: 'refresh_token', user: 'bea' });
    expect(toolbox.status().notes!.state).toBe('ready');
    expect(requests).toHaveLength(1); // only the first sign-in
  });

  it('puts a server whose tokens were revoked back to needs-auth without dropping the others', async () => {
    const { toolbox, requests } = await signedIn('cy');
    await toolbox.finishAuth(await signIn(toolbox.status().notes!.authorizationUrl, 'cy'));
    expect(await call(toolbox, 'whoami')).toBe('Signed in to notes as cy.');

    notes.revoke('cy');
    const error = await call(toolbox, 'whoami').catch((e: unknown) => e);
    expect(McpAuthorizationError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'needs-auth', server: 'notes', tool: 'whoami' });
    const url = (error as McpAuthorizationError).authorizationUrl!;
    expect(url).toMatch(/\/authorize\?/);
    expect(toolbox.status().notes).toMatchObject({ state: 'needs-auth', authorizationUrl: url });
    await waitFor(() => toolbox.tools.whoami === undefined, { what: 'notes tools removed' });
    expect(toolbox.index.names()).not.toContain('whoami');
    // The other server never noticed.
    expect(toolbox.status().behaviour!.state).toBe('ready');
    expect(await call(toolbox, 'echo', { still: true })).toBe('{"still":true}');
    expect(requests.at(-1)).toEqual({ server: 'notes', userId: 'cy', url });

    await toolbox.finishAuth(await signIn(url, 'cy'));
    expect(await call(toolbox, 'whoami')).toBe('Signed in to notes as cy.');
  });

  it('steps up to more scope when a call needs it', async () => {
    const narrow = await startNotesServer({ challengeScope: 'notes:read' });
    try {
      const { oauth } = oauthInMemory();
      const toolbox = await connectMcpServers({
        servers: { notes: { url: narrow.url, auth: oauth } },
        userId: 'dee',
        onElicitation: () => ({ action: 'accept', content: { title: 'Milk' } }),
      });
      open.push(toolbox);
      const first = await signIn(toolbox.status().notes!.authorizationUrl, 'dee');
      await toolbox.finishAuth(first);
      expect(await call(toolbox, 'list_notes')).toBe('dee has no notes yet.');

      const error = await call(toolbox, 'add_note', { text: 'buy milk' }).catch((e: unknown) => e);
      expect(McpAuthorizationError.isInstance(error)).toBe(true);
      const url = new URL((error as McpAuthorizationError).authorizationUrl!);
      expect(url.searchParams.get('scope')).toBe('notes:read notes:write');
      await toolbox.finishAuth(await signIn(url.href, 'dee'));
      expect(await call(toolbox, 'add_note', { text: 'buy milk' })).toBe(
        'Saved note "Milk" (yellow) for dee.',
      );
    } finally {
      await narrow.close();
    }
  });

  it('refuses a callback started by another user, and one for a toolbox without auth', async () => {
    const { oauth } = oauthInMemory();
    const toolboxes = await Promise.all(
      ['eve', 'fay'].map(userId =>
        connectMcpServers({ servers: { notes: { url: notes.url, auth: oauth } }, userId }),
      ),
    );
    open.push(...toolboxes);
    const [eve, fay] = toolboxes as [McpToolbox, McpToolbox];
    const eves = await signIn(eve.status().notes!.authorizationUrl, 'eve');
    const stolen = await fay.finishAuth(eves).catch((e: unknown) => e);
    expect(stolen).toMatchObject({
      name: 'ToolbeltMcpAuthorizationError',
      reason: 'invalid-state',
    });
    expect(fay.status().notes!.state).toBe('needs-auth');
    // Eve's own callback still works.
    expect(await eve.finishAuth(eves)).toMatchObject({ state: 'ready' });

    const plain = await connectMcpServers({ servers: { b: fixture('behaviour-server.ts') } });
    open.push(plain);
    await expect(plain.finishAuth({ server: 'b', code: 'x' })).rejects.toMatchObject({
      reason: 'no-auth',
    });
  });

  it('finishes an app-wide sign-in only with the state it started, and never from a user’s toolbox', async () => {
    const app = await connectMcpServers({
      servers: { notes: { url: notes.url, auth: appWideProvider() } },
    });
    open.push(app);
    const url = app.status().notes!.authorizationUrl!;
    expect(new URL(url).searchParams.get('state')).toMatch(/^[\w-]{32}$/);
    const mallory = await app.forUser({ userId: 'mallory' });
    expect(mallory.status().notes!.state).toBe('needs-auth');
    // A user's toolbox never shows the app-wide sign-in's URL (its state is the only check),
    // in the status or in the error every user's model may read.
    const seen = mallory.status().notes!;
    expect(seen.authorizationUrl).toBeUndefined();
    expect(seen.error).toMatchObject({ reason: 'needs-auth', authorizationUrl: undefined });
    expect(seen.error!.message).toMatch(/app's administrator to sign in/);
    expect(JSON.stringify(seen) + seen.error!.message).not.toContain(
      new URL(url).searchParams.get('state')!,
    );
    expect(app.status().notes!.error!.message).not.toContain('state=');
    // Anyone can sign in at the authorization server with their own account ...
    const theirs = await signIn(url, 'mallory');
    // ... but their code finishes nothing without the state, from their toolbox or the app's.
    const refused = (promise: Promise<unknown>) => promise.catch((e: unknown) => e);
    for (const attempt of [
      mallory.finishAuth({ code: theirs.code }),
      app.finishAuth({ code: theirs.code }),
      app.finishAuth({ server: 'notes', code: theirs.code }),
      app.finishAuth({ server: 'notes', code: theirs.code, state: 'forged-state' }),
    ]) {
      expect(await refused(attempt)).toMatchObject({
        name: 'ToolbeltMcpAuthorizationError',
        reason: 'invalid-state',
      });
    }
    // A user's toolbox never finishes the shared server's sign-in, even with its state.
    const borrowed = await refused(mallory.finishAuth({ ...theirs, server: 'notes' }));
    expect(borrowed).toMatchObject({ name: 'ToolbeltInvalidArgumentError', argument: 'server' });
    expect((borrowed as Error).message).toMatch(/once for the whole app/);
    expect(await refused(mallory.finishAuth(theirs))).toMatchObject({ reason: 'invalid-state' });
    expect(app.status().notes!.state).toBe('needs-auth');

    // The administrator's callback, with the state the app started, signs everyone in.
    const admins = await signIn(url, 'admin');
    expect(await app.finishAuth(admins)).toMatchObject({ name: 'notes', state: 'ready' });
    expect(await call(mallory, 'whoami')).toBe('Signed in to notes as admin.');
    expect(await refused(app.finishAuth(admins))).toMatchObject({ reason: 'invalid-state' });
  });

  it('rejects bad auth options with a clear error before connecting anything', async () => {
    const { oauth } = oauthInMemory();
    await expect(
      connectMcpServers({
        servers: { s: { ...fixture('behaviour-server.ts'), auth: oauth } as never },
      }),
    ).rejects.toThrow(/servers\.s\.auth.*Streamable HTTP/);
    await expect(
      connectMcpServers({ servers: { s: { url: notes.url, auth: { nope: true } as never } } }),
    ).rejects.toThrow(/OAuthClientProvider/);
    expect(() =>
      createMcpOAuth({ store: oauthInMemory().store, redirectUrl: '/relative' }),
    ).toThrow(/redirectUrl/);
    expect(() =>
      createMcpOAuth({ store: {} as never, redirectUrl: 'http://127.0.0.1/cb' }),
    ).toThrow(/unstorage Storage/);
    expect(() =>
      createMcpOAuth({
        store: oauthInMemory().store,
        redirectUrl: 'http://127.0.0.1/cb',
        encryptionKey: 'short',
      }),
    ).toThrow(/at least 32 bytes/);
  });
});
