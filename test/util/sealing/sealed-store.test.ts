import { createDecipheriv, createHash, createHmac, hkdfSync } from 'node:crypto';
import { createStorage } from 'unstorage';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SealedStore } from '../../../src/util/sealing/sealed-store.ts';

const oldKey = 'old-test-secret-0123456789abcdefghijklmnop';
const newKey = 'new-test-secret-0123456789abcdefghijklmnop';
const sealedWith = (store: ReturnType<typeof createStorage>, keys: string[], purpose = 'test') =>
  new SealedStore({ store, prefix: 'app:rec', purpose, keys });

afterEach(() => {
  vi.useRealTimers();
});

describe('SealedStore', () => {
  it('encrypts values, binds them to their key, and hashes ids with a key', async () => {
    const store = createStorage();
    const sealed = sealedWith(store, [newKey]);
    const ada = await sealed.id('ada@example.com');
    expect(ada).not.toBe(await sealed.id('bob@example.com'));
    expect(ada).toMatch(/^[\w-]{32}$/);
    // Not a plain hash anyone could recompute from a list of e-mail addresses.
    const plainHash = createHash('sha256').update('ada@example.com').digest('base64url');
    expect(ada).not.toBe(plainHash.slice(0, 32));

    await sealed.set(['user', { id: 'ada@example.com' }], { access_token: 'secret-token' });
    const adaKey = await sealed.key(['user', { id: 'ada@example.com' }]);
    expect(adaKey).toBe(`app:rec:user:${ada}`);
    expect(JSON.stringify(await store.getItem(adaKey))).not.toContain('secret-token');
    expect(await sealed.get(['user', { id: 'ada@example.com' }])).toEqual({
      access_token: 'secret-token',
    });

    // A value copied under another user's key does not open there.
    const bobKey = await sealed.key(['user', { id: 'bob@example.com' }]);
    await store.setItem(bobKey, await store.getItem(adaKey));
    expect(await sealed.get(['user', { id: 'bob@example.com' }])).toBeUndefined();
  });

  it('derives separate keys for sealing, for id hashes and for the key id, per purpose', async () => {
    const store = createStorage();
    const sealed = sealedWith(store, [newKey], 'mcp-auth');
    await sealed.set(['record'], { n: 1 });
    const raw = (await store.getItem('app:rec:record')) as Record<string, string>;

    // The documented derivation: HKDF-SHA256(secret, "ai-toolbelt sealed-store", info).
    const derive = (info: string, length: number) =>
      Buffer.from(hkdfSync('sha256', newKey, 'ai-toolbelt sealed-store', info, length));
    const sealKey = derive('seal\0mcp-auth', 32);
    const idKey = derive('id\0mcp-auth', 32);
    expect(raw.kid).toBe(derive('key-id', 9).toString('base64url'));
    expect(sealed.keyId).toBe(raw.kid);
    const decipher = createDecipheriv('aes-256-gcm', sealKey, Buffer.from(raw.iv!, 'base64'));
    decipher.setAAD(Buffer.from('app:rec:record'));
    decipher.setAuthTag(Buffer.from(raw.tag!, 'base64'));
    const opened = Buffer.concat([decipher.update(raw.data!, 'base64'), decipher.final()]);
    expect(JSON.parse(opened.toString())).toEqual({ value: { n: 1 } });

    // Ids are keyed by the id key, never by the key that seals.
    const hmac = (key: Buffer) =>
      createHmac('sha256', key).update('ada').digest('base64url').slice(0, 32);
    expect(await sealed.id('ada')).toBe(hmac(idKey));
    expect(await sealed.id('ada')).not.toBe(hmac(sealKey));

    // The same secret for another purpose shares neither key.
    const other = sealedWith(store, [newKey], 'embeddings');
    expect(await other.get(['record'])).toBeUndefined();
    expect(await other.id('ada')).not.toBe(await sealed.id('ada'));
    expect(other.keyId).toBe(sealed.keyId);
  });

  it('rotates keys: old records are read, rewritten under the first key, and unknown keys read as absent', async () => {
    const store = createStorage();
    const before = sealedWith(store, [oldKey]);
    await before.set(['user', { id: 'ada' }], { v: 'old' });
    await before.set(['user', { id: 'bob' }], { v: 'old' });
    await before.set(['settings'], { v: 'old' });

    const rotated = sealedWith(store, [newKey, oldKey]);
    expect(await rotated.get(['user', { id: 'ada' }])).toEqual({ v: 'old' });
    expect(await rotated.get(['settings'])).toEqual({ v: 'old' });
    expect(await rotated.ids('ada')).toEqual([await rotated.id('ada'), await before.id('ada')]);

    await rotated.set(['user', { id: 'ada' }], { v: 'new' });
    await rotated.set(['settings'], { v: 'new' });
    const raw = (await store.getItem(await rotated.key(['user', { id: 'ada' }]))) as {
      kid: string;
    };
    expect(raw.kid).toBe(rotated.keyId);
    expect(raw.kid).not.toBe(before.keyId);
    // The copy under the old key is gone, so the old key alone no longer finds it.
    expect(await store.getItem(await before.key(['user', { id: 'ada' }]))).toBeNull();
    expect(await before.get(['user', { id: 'ada' }])).toBeUndefined();

    // Once the old key is dropped, what was rewritten stays and the rest is absent.
    const after = sealedWith(store, [newKey]);
    expect(await after.get(['user', { id: 'ada' }])).toEqual({ v: 'new' });
    expect(await after.get(['settings'])).toEqual({ v: 'new' });
    expect(await after.get(['user', { id: 'bob' }])).toBeUndefined();

    // A store sealed with a key nobody configured reads as absent.
    const stranger = sealedWith(store, ['unknown-secret-0123456789abcdefghijklmnop']);
    expect(await stranger.get(['settings'])).toBeUndefined();

    // remove() reaches the copy under every key.
    await rotated.remove(['user', { id: 'bob' }]);
    expect(await before.get(['user', { id: 'bob' }])).toBeUndefined();
  });

  it('expires records on drivers that ignore ttl (memory)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));
    const store = createStorage();
    const sealed = sealedWith(store, [newKey]);
    await sealed.set(['flow', { id: 'a' }], { started: 1 }, { ttlMs: 60_000 });
    await sealed.set(['flow', { id: 'b' }], { started: 2 }, { ttlMs: 60_000 });
    await sealed.set(['flow', { id: 'c' }], { started: 3 }, { ttlMs: 600_000 });
    vi.setSystemTime(new Date('2030-01-01T00:00:59Z'));
    expect(await sealed.get(['flow', { id: 'a' }])).toEqual({ started: 1 });

    vi.setSystemTime(new Date('2030-01-01T00:01:01Z'));
    expect(await sealed.get(['flow', { id: 'a' }])).toBeUndefined();
    expect(await store.getItem(await sealed.key(['flow', { id: 'a' }]))).toBeNull();
    // A sweep removes what nobody reads again.
    expect(await sealed.removeExpired(['flow'])).toBe(1);
    expect(await store.getKeys('app:rec:flow')).toEqual([await sealed.key(['flow', { id: 'c' }])]);
  });

  it('stores plain JSON without a secret, ids keyed by a salt of that store, and removes a subtree', async () => {
    const store = createStorage();
    const plain = new SealedStore({ store, prefix: 'p', purpose: 'test' });
    expect(plain.encrypted).toBe(false);
    expect(plain.keyId).toBeUndefined();
    const u1 = await plain.id('u1');
    const elsewhere = new SealedStore({ store: createStorage(), prefix: 'p', purpose: 'test' });
    expect(await elsewhere.id('u1')).not.toBe(u1);
    expect(u1).not.toBe(createHash('sha256').update('u1').digest('base64url').slice(0, 32));

    await plain.set(['user', { id: 'u1' }, 'server', 's1'], { a: 1 });
    await plain.set(['user', { id: 'u1' }, 'server', 's2'], { a: 2 });
    await plain.set(['user', { id: 'u2' }, 'server', 's1'], { a: 3 });
    expect(await store.getItem(`p:user:${u1}:server:s1`)).toEqual({ v: 2, plain: { a: 1 } });
    await plain.removeAll(['user', { id: 'u1' }]);
    expect((await store.getKeys('p:user')).sort()).toEqual([
      `p:user:${await plain.id('u2')}:server:s1`,
    ]);
    // The same store sealed now ignores plain records (and the reverse).
    expect(await sealedWith(store, [newKey]).get(['user', { id: 'u2' }, 'server', 's1'])).toBe(
      undefined,
    );
  });

  it('builds keys as unstorage stores them, so a prefix with `/` lists, removes and sweeps', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));
    const store = createStorage();
    for (const keys of [[newKey], []]) {
      const sealed = new SealedStore({ store, prefix: '/app/mcp//', purpose: 'test', keys });
      await sealed.set(['user', { id: 'ada' }, 'server', 's1'], { a: 1 });
      await sealed.set(['user', { id: 'bob' }, 'server', 's1'], { a: 2 });
      await sealed.set(['flow', { id: 'old' }], { f: 1 }, { ttlMs: 1_000 });
      await sealed.set(['flow', { id: 'new' }], { f: 2 }, { ttlMs: 600_000 });
      expect(await sealed.key(['flow', { id: 'new' }])).toMatch(/^app:mcp:flow:/);
      expect(await sealed.get(['user', { id: 'ada' }, 'server', 's1'])).toEqual({ a: 1 });

      await sealed.removeAll(['user', { id: 'ada' }]);
      expect(await store.getKeys('app:mcp:user')).toEqual([
        await sealed.key(['user', { id: 'bob' }, 'server', 's1']),
      ]);
      vi.setSystemTime(Date.now() + 2_000);
      expect(await sealed.removeExpired(['flow'])).toBe(1);
      expect(await store.getKeys('app:mcp:flow')).toEqual([
        await sealed.key(['flow', { id: 'new' }]),
      ]);
      await store.clear();
    }
    expect(() => new SealedStore({ store, prefix: '/:', purpose: 'test' })).toThrow(/prefix/);
  });

  it('without a key, processes that both wrote a salt at start-up end up on the stored one', async () => {
    const store = createStorage();
    // Two processes: both find no salt, A writes and reads its own back, then B's write lands.
    let arrived = 0;
    let bothLooked!: () => void;
    const looked = new Promise<void>(resolve => (bothLooked = resolve));
    let aLoaded!: () => void;
    const aDone = new Promise<void>(resolve => (aLoaded = resolve));
    const replica = (name: 'a' | 'b') => {
      let reads = 0;
      return {
        ...store,
        getItem: async <T>(key: string): Promise<T | null> => {
          const value = await store.getItem<T>(key);
          if (!key.endsWith(':id-salt')) return value;
          reads++;
          if (reads === 1) {
            if (++arrived === 2) bothLooked();
            await looked;
          }
          if (name === 'a' && reads === 2) aLoaded();
          return value;
        },
        setItem: async (key: string, value: never) => {
          if (name === 'b' && key.endsWith(':id-salt')) await aDone;
          await store.setItem(key, value);
        },
      } as typeof store;
    };
    const [a, b] = [replica('a'), replica('b')].map(
      replicaStore => new SealedStore({ store: replicaStore, prefix: 'p', purpose: 'test' }),
    );
    await Promise.all([a!.id('u1'), b!.id('u1')]);
    // From here on both hash with the salt the store kept, and read each other's records.
    expect(await a!.id('u1')).toBe(await b!.id('u1'));
    await a!.set(['user', { id: 'u1' }], { from: 'a' });
    expect(await b!.get(['user', { id: 'u1' }])).toEqual({ from: 'a' });
    const fresh = new SealedStore({ store, prefix: 'p', purpose: 'test' });
    expect(await fresh.id('u1')).toBe(await a!.id('u1'));
  });

  it('refuses short secrets and stores that are not unstorage', () => {
    const store = createStorage();
    expect(() => sealedWith(store, ['short'])).toThrow(/keys.*at least 32 bytes.*openssl/);
    expect(() => sealedWith(store, [newKey, 'short'])).toThrow(/keys\[1\]/);
    expect(() => new SealedStore({ store: {} as never, prefix: 'p', purpose: 't' })).toThrow(
      /unstorage Storage/,
    );
    expect(() => new SealedStore({ store, prefix: 'p', purpose: '' })).toThrow(/purpose/);
  });
});
