// Tokens at rest: which stores need a key, key rotation over a real sign-in,
// and started sign-ins that expire on the memory driver (which ignores ttl).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStorage, type Storage } from 'unstorage';
import fsLiteDriver from 'unstorage/drivers/fs-lite';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  connectMcpServers,
  createMcpOAuth,
  McpAuthorizationError,
  type McpToolbox,
} from '../../src/mcp/index.ts';
import { callOptions } from './helpers.ts';
import { type NotesServer, rawStore, signIn, startNotesServer } from './sign-in.ts';

const redirectUrl = 'http://127.0.0.1:3000/api/mcp/callback';
const keyA = 'rotation-key-a-0123456789abcdefghijklmnopq';
const keyB = 'rotation-key-b-0123456789abcdefghijklmnopq';

let notes: NotesServer;
let dir: string;
const open: McpToolbox[] = [];
beforeAll(async () => {
  notes = await startNotesServer();
  dir = await mkdtemp(join(tmpdir(), 'ai-toolbelt-token-store-'));
});
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(open.splice(0).map(toolbox => toolbox.close()));
});
afterAll(async () => {
  await notes?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function connect(store: Storage, encryptionKey: string | string[], userId: string) {
  const oauth = createMcpOAuth({ store, redirectUrl, encryptionKey });
  const toolbox = await connectMcpServers({
    servers: { notes: { url: notes.url, auth: oauth } },
    userId,
  });
  open.push(toolbox);
  return toolbox;
}

const whoami = async (toolbox: McpToolbox) =>
  (
    (await toolbox.tools.whoami!.execute!({}, callOptions())) as {
      content: { text: string }[];
    }
  ).content[0]!.text;

describe('the token store', () => {
  it('sweeps expired sign-ins in the background: a store error there fails no sign-in', async () => {
    const store = createStorage();
    let listed = 0;
    const failing = {
      ...store,
      getKeys: async () => {
        listed++;
        throw new Error('store is down for listing');
      },
    } as typeof store;
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const oauth = createMcpOAuth({ store: failing, redirectUrl, encryptionKey: keyA });
      const redirected: URL[] = [];
      const provider = oauth.provider({
        userId: 'ada',
        server: 'notes',
        serverUrl: 'https://notes.test/mcp',
        onRedirect: url => void redirected.push(url),
      });
      const state = await provider.state();
      await provider.saveCodeVerifier('verifier');
      const url = new URL(`https://as.test/authorize?state=${state}`);
      await provider.redirectToAuthorization(url);
      expect(redirected).toEqual([url]);
      expect(await oauth.callbackServer({ userId: 'ada', state })).toBe('notes');
      await vi.waitFor(() => expect(warnings).toHaveLength(1));
      expect(listed).toBe(1);
      expect(warnings[0]).toMatchObject({
        name: 'McpOAuthSweepWarning',
        message: expect.stringContaining('store is down for listing'),
      });
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('signs a user out under a prefix with `/` (unstorage stores it with `:`)', async () => {
    const store = createStorage();
    const oauth = createMcpOAuth({ store, redirectUrl, encryptionKey: keyA, prefix: 'app/mcp' });
    for (const [userId, server] of [
      ['ada', 'notes'],
      ['ada', 'files'],
      ['bob', 'notes'],
    ] as const) {
      const provider = oauth.provider({ userId, server, serverUrl: `https://${server}.test/mcp` });
      await provider.saveTokens({ access_token: `${userId}-${server}`, token_type: 'Bearer' });
    }
    expect(await store.getKeys('app:mcp:user')).toHaveLength(3);
    await oauth.signOut({ userId: 'ada' });
    expect(await store.getKeys('app:mcp:user')).toHaveLength(1);
    const bob = oauth.provider({
      userId: 'bob',
      server: 'notes',
      serverUrl: 'https://notes.test/mcp',
    });
    expect((await bob.tokens())?.access_token).toBe('bob-notes');
  });

  it('refuses a store that keeps data beyond the process without a key, naming what to set', () => {
    const onDisk = createStorage({ driver: fsLiteDriver({ base: join(dir, 'refused') }) });
    const attempt = () => createMcpOAuth({ store: onDisk, redirectUrl });
    expect(attempt).toThrow(
      expect.objectContaining({ name: 'ToolbeltInvalidArgumentError', argument: 'encryptionKey' }),
    );
    expect(attempt).toThrow(/openssl rand -base64 32.*encryptionKey: false/);
    // A memory root with a persistent mount is persistent too.
    const mixed = createStorage().mount('ai-toolbelt', fsLiteDriver({ base: join(dir, 'mixed') }));
    expect(() => createMcpOAuth({ store: mixed, redirectUrl })).toThrow(/encryptionKey/);
    expect(() => createMcpOAuth({ store: onDisk, redirectUrl, encryptionKey: [] })).toThrow(
      /at least one key/,
    );
    // Memory only: nothing outlives the process, so no key is needed.
    expect(createMcpOAuth({ store: createStorage(), redirectUrl }).encrypted).toBe(false);
  });

  it('stores plain JSON only when told to with `encryptionKey: false`, warning once', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const store = createStorage({ driver: fsLiteDriver({ base: join(dir, 'plain') }) });
      const first = createMcpOAuth({ store, redirectUrl, encryptionKey: false });
      createMcpOAuth({ store, redirectUrl, encryptionKey: false });
      expect(first.encrypted).toBe(false);
      await new Promise(resolve => setImmediate(resolve)); // warnings are emitted on the next tick
      const plain = warnings.filter(
        w => (w as { code?: string }).code === 'AI_TOOLBELT_PLAINTEXT_STORE',
      );
      expect(plain).toHaveLength(1);
      expect(plain[0]!.message).toMatch(/MCP sign-ins.*plain JSON/);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('rotates keys: sign-ins sealed with the old key still work and are resealed with the new one', async () => {
    const store = createStorage();
    const before = await connect(store, keyA, 'ida');
    await before.finishAuth(await signIn(before.status().notes!.authorizationUrl, 'ida'));
    expect(await whoami(before)).toBe('Signed in to notes as ida.');
    await before.close();

    const rotated = await connect(store, [keyB, keyA], 'ida');
    expect(rotated.status().notes!.state).toBe('ready');
    // A refresh writes the tokens again, now under the new key.
    notes.expire('ida');
    expect(await whoami(rotated)).toBe('Signed in to notes as ida.');
    await rotated.close();

    const after = await connect(store, keyB, 'ida');
    expect(after.status().notes!.state).toBe('ready');
    expect(await whoami(after)).toBe('Signed in to notes as ida.');

    // A key nobody configured opens nothing: the user has to sign in.
    const stranger = await connect(store, 'some-other-key-0123456789abcdefghijklmn', 'ida');
    expect(stranger.status().notes!.state).toBe('needs-auth');
  });

  it('forgets started sign-ins once they expire, also on the memory driver', async () => {
    const store = createStorage();
    const flows = async () => (await store.getKeys('ai-toolbelt:mcp-auth:flow')).length;
    const jon = await connect(store, keyA, 'jon');
    const url = jon.status().notes!.authorizationUrl;
    expect(await flows()).toBe(1);

    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 11 * 60_000); // past the default flowTtlMs (10 minutes)
    const late = await jon.finishAuth(await signIn(url, 'jon')).catch((e: unknown) => e);
    expect(McpAuthorizationError.isInstance(late)).toBe(true);
    expect(late).toMatchObject({ reason: 'invalid-state' });
    expect(await flows()).toBe(0);

    // A sign-in nobody finishes is swept when a later one starts.
    await connect(store, keyA, 'kim');
    expect(await flows()).toBe(1);
    vi.setSystemTime(Date.now() + 11 * 60_000);
    await connect(store, keyA, 'lea');
    expect(await flows()).toBe(1);
    expect(await rawStore(store)).not.toContain('code_verifier');
  });
});
