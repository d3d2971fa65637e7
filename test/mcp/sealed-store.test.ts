import { createStorage } from 'unstorage';
import { describe, expect, it } from 'vitest';
import { SealedStore } from '../../src/mcp/auth/sealed-store.ts';

describe('SealedStore', () => {
  const secret = 'another-test-secret-0123456789abcdefghij';

  it('encrypts values, binds them to their key, and hashes ids', async () => {
    const store = createStorage();
    const sealed = new SealedStore({ store, prefix: 'app:auth', secret });
    const ada = sealed.id('ada@example.com');
    const bob = sealed.id('bob@example.com');
    expect(ada).not.toBe(bob);
    expect(ada).toMatch(/^[\w-]{32}$/);
    await sealed.set(['user', ada], { tokens: { access_token: 'secret-token' } });
    const raw = JSON.stringify(await store.getItem(sealed.key(['user', ada])));
    expect(raw).not.toContain('secret-token');
    expect(await sealed.get(['user', ada])).toEqual({ tokens: { access_token: 'secret-token' } });

    // A value copied under another user's key does not open there.
    await store.setItem(sealed.key(['user', bob]), await store.getItem(sealed.key(['user', ada])));
    expect(await sealed.get(['user', bob])).toBeUndefined();
    // Nor with another secret.
    const other = new SealedStore({ store, prefix: 'app:auth', secret: `${secret}!` });
    expect(await other.get(['user', ada])).toBeUndefined();
  });

  it('stores plain JSON without a secret, and removes a subtree', async () => {
    const store = createStorage();
    const plain = new SealedStore({ store, prefix: 'p' });
    expect(plain.encrypted).toBe(false);
    await plain.set(['user', 'u1', 'server', 's1'], { a: 1 });
    await plain.set(['user', 'u1', 'server', 's2'], { a: 2 });
    await plain.set(['user', 'u2', 'server', 's1'], { a: 3 });
    expect(await store.getItem('p:user:u1:server:s1')).toEqual({ a: 1 });
    await plain.removeAll(['user', 'u1']);
    expect(await store.getKeys('p')).toEqual(['p:user:u2:server:s1']);
  });
});
