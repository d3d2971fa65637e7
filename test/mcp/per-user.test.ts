import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectMcpServers, type McpToolbox } from '../../src/mcp/index.ts';
import {
  callOptions,
  childPids,
  countingEmbeddingModel,
  eventRecorder,
  fixture,
  waitFor,
} from './helpers.ts';
import { type NotesServer, oauthInMemory, rawStore, signIn, startNotesServer } from './sign-in.ts';

type Output = { content: { type: string; text: string }[] };
const call = async (toolbox: McpToolbox, name: string, args: object = {}) => {
  const tool = toolbox.tools[name];
  if (tool === undefined) throw new Error(`no tool ${name}`);
  return ((await tool.execute!(args, callOptions())) as Output).content[0]!.text;
};
const noteTools = ['whoami', 'list_notes', 'search_notes', 'add_note'];

let notes: NotesServer;
const open: McpToolbox[] = [];
beforeAll(async () => {
  notes = await startNotesServer();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map(toolbox => toolbox.close()));
});
afterAll(() => notes?.close());

describe('per-user toolboxes over a shared catalog', () => {
  it('embeds the catalog once for every user, opens only that user’s connections, and keeps users apart', async () => {
    const { store, oauth } = oauthInMemory();
    const { model, embedded } = countingEmbeddingModel();
    const recorder = eventRecorder();
    const root = await connectMcpServers({
      servers: {
        catalog: fixture('catalog-server.ts', { TOOL_COUNT: '20' }),
        notes: { url: notes.url, auth: oauth },
      },
      embeddingModel: model,
      onEvent: recorder.onEvent,
      onElicitation: ({ userId }) => ({ action: 'accept', content: { title: `${userId}'s note` } }),
    });
    open.push(root);
    expect(root.status().notes).toEqual({
      name: 'notes',
      state: 'per-user',
      tools: 0,
      attempts: 0,
    });
    expect(Object.keys(root.tools)).toHaveLength(20);
    expect(embedded).toHaveLength(20);
    const stdioChildren = childPids();
    expect(stdioChildren).toHaveLength(1);

    const ada = await root.forUser({ userId: 'ada' });
    expect(ada.userId).toBe('ada');
    expect(ada.status().catalog!.state).toBe('ready');
    expect(ada.status().notes).toMatchObject({ state: 'needs-auth', userId: 'ada' });
    expect(Object.keys(ada.tools)).toHaveLength(20);
    // Same server, same definitions: nothing re-embedded, no second stdio server.
    expect(embedded).toHaveLength(20);
    expect(childPids()).toEqual(stdioChildren);
    expect(await root.forUser({ userId: 'ada' })).toBe(ada);

    await ada.finishAuth(await signIn(ada.status().notes!.authorizationUrl, 'ada'));
    expect(Object.keys(ada.tools)).toEqual(expect.arrayContaining(noteTools));
    expect(embedded).toHaveLength(24);
    // The process-wide toolbox does not offer a user's tools.
    expect(root.tools.whoami).toBeUndefined();

    // Bob's sign-in is his own: Ada's tokens do not connect him.
    const bob = await root.forUser({ userId: 'bob' });
    expect(bob.status().notes!.state).toBe('needs-auth');
    expect(bob.tools.whoami).toBeUndefined();
    await bob.finishAuth(await signIn(bob.status().notes!.authorizationUrl, 'bob'));
    expect(embedded).toHaveLength(24); // the notes tools were embedded for Ada already
    expect(Object.keys(bob.tools).sort()).toEqual(Object.keys(ada.tools).sort());

    expect(await call(ada, 'whoami')).toBe('Signed in to notes as ada.');
    expect(await call(bob, 'whoami')).toBe('Signed in to notes as bob.');
    expect(await call(ada, 'add_note', { text: 'the launch code is 1234' })).toBe(
      `Saved note "ada's note" (yellow) for ada.`,
    );
    expect(await call(bob, 'search_notes', { query: 'launch' })).toBe('No matching notes.');
    expect(await call(bob, 'list_notes')).toBe('bob has no notes yet.');
    expect(await call(ada, 'list_notes')).toContain('the launch code is 1234');
    // Each user's events name the user; shared tools keep working for both.
    expect(recorder.events).toContainEqual(
      expect.objectContaining({ type: 'elicitation', userId: 'ada', action: 'accept' }),
    );
    expect(await call(bob, 'tool_0001')).toBe('tool_0001 {}');

    // The store holds two sealed sign-ins under hashed user keys, no user ids.
    const raw = await rawStore(store);
    expect(raw).not.toMatch(/"ada"|"bob"|:ada:|:bob:|access_token/);
    const userKeys = (await store.getKeys()).filter(key => key.includes(':user:'));
    expect(userKeys).toHaveLength(2);

    // Closing Ada's toolbox ends only her connection; Bob still holds the notes tools.
    await ada.close();
    expect(ada.status().notes!.state).toBe('closed');
    expect(Object.keys(ada.tools)).toEqual([]);
    expect(bob.status().notes!.state).toBe('ready');
    expect(root.index.names()).toContain('whoami');
    expect(await call(bob, 'whoami')).toBe('Signed in to notes as bob.');
    expect(root.status().catalog!.state).toBe('ready');
    expect(childPids()).toEqual(stdioChildren);
    // Ada comes back: a new toolbox, already signed in from the store.
    const again = await root.forUser({ userId: 'ada' });
    expect(again).not.toBe(ada);
    expect(again.status().notes!.state).toBe('ready');
    expect(embedded).toHaveLength(24);

    // When nobody offers the notes tools any more they leave the index.
    await Promise.all([bob.close(), again.close()]);
    expect(root.index.names()).not.toContain('whoami');
    expect(root.index.names()).toHaveLength(20);
  });

  it('closes every per-user toolbox with the process-wide one', async () => {
    const { oauth } = oauthInMemory();
    const root = await connectMcpServers({
      servers: { notes: { url: notes.url, auth: oauth } },
    });
    const users = await Promise.all(['u1', 'u2'].map(userId => root.forUser({ userId })));
    await root.close();
    expect(users.map(user => user.status().notes!.state)).toEqual(['closed', 'closed']);
    await expect(root.forUser({ userId: 'u3' })).rejects.toThrow(/closed/);
  });

  it('closes a per-user toolbox nobody used for userIdleTimeoutMs', async () => {
    const { oauth } = oauthInMemory();
    const root = await connectMcpServers({
      servers: { notes: { url: notes.url, auth: oauth } },
      userIdleTimeoutMs: 300,
    });
    open.push(root);
    const idle = await root.forUser({ userId: 'idle' });
    await waitFor(() => idle.status().notes!.state === 'closed', { what: 'idle toolbox closed' });
    const fresh = await root.forUser({ userId: 'idle' });
    expect(fresh).not.toBe(idle);
    expect(fresh.status().notes!.state).toBe('needs-auth');
  });

  it('rejects a missing user id and forUser on a per-user toolbox', async () => {
    const root = await connectMcpServers({ servers: {} });
    open.push(root);
    await expect(root.forUser({ userId: '' })).rejects.toThrow(/userId/);
    const user = await root.forUser({ userId: 'x' });
    await expect(user.forUser({ userId: 'y' })).rejects.toThrow(/forUser/);
  });
});
