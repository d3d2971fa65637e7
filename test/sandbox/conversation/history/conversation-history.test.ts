// The history a conversation keeps for restoring, against a real unstorage store: file versions
// bounded and deleted when no restore needs them, records refreshed with the handle, keys that
// reveal nothing, per-user and memory bounds (issue 38, findings 2, 3, 6 and 7).
import { createHash } from 'node:crypto';
import { createStorage } from 'unstorage';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { boundedMemoryStorage } from '../../../../src/sandbox/conversation/history/bounded-memory-storage.ts';
import { ConversationHistory } from '../../../../src/sandbox/conversation/history/conversation-history.ts';
import {
  type InterpreterHandle,
  newHandle,
} from '../../../../src/sandbox/conversation/history/interpreter-handle.ts';
import { versionsFor } from '../../../../src/sandbox/conversation/history/input-versions.ts';
import { restoreSummary } from '../../../../src/sandbox/conversation/history/restore-summary.ts';
import {
  type ConversationOptions,
  resolveConversationOptions,
} from '../../../../src/sandbox/options/conversation-options.ts';
import { InvalidArgumentError } from '../../../../src/errors/invalid-argument-error.ts';

const KEY = 'history-test-key-0123456789abcdef0123';
const placed = { engine: { name: 'local' }, id: 'c1', secret: 's', startedAt: 0 };

function setUp(options: ConversationOptions = {}) {
  const store = createStorage();
  const history = new ConversationHistory({
    options: resolveConversationOptions({ store, encryptionKey: KEY, ...options }),
  });
  return { store, history };
}

/** Runs cell `n` the way the interpreters do: inputs, a success kept, the handle saved. */
async function cell(
  history: ConversationHistory,
  owner: { userId: string; conversationId: string },
  handle: InterpreterHandle,
  files: Array<{ path: string; data: Uint8Array }>,
  code = 'pass',
) {
  const n = handle.cellCount + 1;
  const fresh = await history.addInputs(owner, handle, files, n);
  handle.cellCount = n;
  await history.keepCell(owner, handle, { n, code, timeoutMs: 30_000 });
  handle.usedAt = Date.now();
  const evicted = await history.save(owner, handle);
  return { fresh, evicted };
}

const fileKeys = async (store: ReturnType<typeof createStorage>) =>
  (await store.getKeys()).filter(key => key.includes(':f:'));

afterEach(() => {
  vi.useRealTimers();
});

describe('conversation history', () => {
  it('20 versions of one path leave one record when only one fits maxHistoryBytes', async () => {
    const { store, history } = setUp({ maxHistoryBytes: 150_000 });
    const owner = { userId: 'ann', conversationId: 'c' };
    const handle = newHandle({ placed, servedBy: 'me' });
    for (let version = 0; version < 20; version++) {
      const data = new Uint8Array(100_000).fill(version);
      const { fresh } = await cell(history, owner, handle, [{ path: '/tmp/data.csv', data }]);
      expect(fresh).toHaveLength(1);
    }
    expect(await fileKeys(store)).toHaveLength(1);
    expect(handle.inputs).toHaveLength(1);
    expect(handle.inputs[0]).toMatchObject({ cell: 20, kept: true });
    expect(Buffer.from((await history.loadInput(owner, handle.inputs[0]!))!)[0]).toBe(19);
  });

  it('versions replaced with no kept cell between them are deleted at once', async () => {
    const { store, history } = setUp();
    const owner = { userId: 'ann', conversationId: 'c' };
    const handle = newHandle({ placed, servedBy: 'me' });
    for (let version = 0; version < 20; version++) {
      const data = new Uint8Array(1_000).fill(version);
      // Cells that fail are not kept: no restore reads the versions they saw.
      await history.addInputs(owner, handle, [{ path: '/tmp/a.bin', data }], ++handle.cellCount);
      await history.save(owner, handle);
    }
    expect(await fileKeys(store)).toHaveLength(1);
  });

  it('a version a kept cell read stays until that cell is dropped, and is placed before it', async () => {
    const { history } = setUp();
    const owner = { userId: 'ann', conversationId: 'c' };
    const handle = newHandle({ placed, servedBy: 'me' });
    const v1 = new TextEncoder().encode('one');
    const v2 = new TextEncoder().encode('two');
    await cell(history, owner, handle, [{ path: '/tmp/x.txt', data: v1 }], 'a = read()');
    await cell(history, owner, handle, [], 'b = 1');
    await cell(history, owner, handle, [{ path: '/tmp/x.txt', data: v2 }], 'c = read()');
    const placedVersions = new Set<(typeof handle.inputs)[number]>();
    const order = handle.cells.map(kept => ({
      n: kept.n,
      files: versionsFor({ inputs: handle.inputs, n: kept.n, placed: placedVersions }).map(
        input => input.cell,
      ),
    }));
    expect(order).toEqual([
      { n: 1, files: [1] },
      { n: 2, files: [] },
      { n: 3, files: [3] },
    ]);
    expect(handle.inputs.map(input => [input.cell, input.until])).toEqual([
      [1, 3],
      [3, undefined],
    ]);
  });

  it('an unchanged file is not sent again, unless the interpreter lost it at its restore', async () => {
    const { history } = setUp({ maxHistoryBytes: 10 });
    const owner = { userId: 'ann', conversationId: 'c' };
    const handle = newHandle({ placed, servedBy: 'me' });
    const data = new Uint8Array(100).fill(7);
    // Too big to keep: a restore cannot place it.
    expect((await cell(history, owner, handle, [{ path: '/tmp/big', data }])).fresh).toHaveLength(
      1,
    );
    expect((await cell(history, owner, handle, [{ path: '/tmp/big', data }])).fresh).toHaveLength(
      0,
    );
    const restored = newHandle({ placed, servedBy: 'me', previous: handle });
    restored.absent = ['/tmp/big'];
    expect((await cell(history, owner, restored, [{ path: '/tmp/big', data }])).fresh).toHaveLength(
      1,
    );
    expect(restored.absent).toEqual([]);
  });

  it('file records outlive historyTtlMs while the conversation goes on', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { history } = setUp({ historyTtlMs: 10_000 });
    const owner = { userId: 'ann', conversationId: 'c' };
    const handle = newHandle({ placed, servedBy: 'me' });
    await cell(history, owner, handle, [{ path: '/tmp/a', data: new Uint8Array([1, 2, 3]) }]);
    for (let step = 0; step < 6; step++) {
      vi.setSystemTime(Date.now() + 6_000);
      await cell(history, owner, handle, []);
    }
    const stored = (await history.load(owner))!;
    expect(stored.inputs[0]!.cell).toBe(1);
    expect(await history.loadInput(owner, stored.inputs[0]!)).toEqual(Buffer.from([1, 2, 3]));
  });

  it('store keys reveal neither ids nor file contents (a keyed hash, not SHA-256)', async () => {
    const { store, history } = setUp();
    const owner = { userId: 'ann@example.com', conversationId: 'chat-123' };
    const handle = newHandle({ placed, servedBy: 'me' });
    const data = new TextEncoder().encode('a well-known file');
    await cell(history, owner, handle, [{ path: '/tmp/known.txt', data }]);
    const sha256 = createHash('sha256').update(data).digest('hex');
    const keys = (await store.getKeys()).join('\n');
    expect(await fileKeys(store)).toHaveLength(1);
    for (const secret of [sha256, sha256.slice(0, 16), 'ann@example.com', 'chat-123', 'known']) {
      expect(keys).not.toContain(secret);
    }
    expect(JSON.stringify(await store.getItem((await store.getKeys())[0]!))).not.toContain(sha256);
  });

  it('a user past maxConversationsPerUser or maxUserHistoryBytes loses the least recently used history', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { store, history } = setUp({
      maxConversationsPerUser: 3,
      maxHistoryBytes: 1_000,
      maxUserHistoryBytes: 2_500,
    });
    const evictedIds: string[] = [];
    for (let i = 0; i < 6; i++) {
      vi.setSystemTime(Date.now() + 1_000);
      const owner = { userId: 'bob', conversationId: `chat-${i}` };
      const handle = newHandle({
        placed: { ...placed, id: `c${i}` },
        servedBy: 'me',
      });
      const data = new Uint8Array(i < 3 ? 10 : 900).fill(i);
      const { evicted } = await cell(history, owner, handle, [{ path: '/tmp/f', data }]);
      evictedIds.push(...evicted.map(old => old.containerId));
    }
    // Three by count (chats 0-2 had 10-byte files); then bytes: 3 x ~900 > 2,500.
    expect(evictedIds).toEqual(['c0', 'c1', 'c2', 'c3']);
    for (let i = 0; i < 6; i++) {
      const found = await history.load({ userId: 'bob', conversationId: `chat-${i}` });
      expect(found === undefined, `chat-${i}`).toBe(i < 4);
    }
    expect(await fileKeys(store)).toHaveLength(2);
    // Another user's conversations are not counted with bob's.
    const other = { userId: 'eve', conversationId: 'chat-0' };
    await cell(history, other, newHandle({ placed, servedBy: 'me' }), []);
    expect(await history.load({ userId: 'bob', conversationId: 'chat-5' })).toBeDefined();
  });

  it('maxUserHistoryBytes below maxHistoryBytes is refused, naming both', () => {
    expect(() =>
      resolveConversationOptions({ maxHistoryBytes: 2_000, maxUserHistoryBytes: 1_000 }),
    ).toThrow(InvalidArgumentError);
    expect(() =>
      resolveConversationOptions({ maxHistoryBytes: 2_000, maxUserHistoryBytes: 1_000 }),
    ).toThrow(/maxUserHistoryBytes.*maxHistoryBytes/s);
  });

  it('the default memory store stays within memoryStoreBytes, keeping its id salt', async () => {
    const storage = boundedMemoryStorage({ maxBytes: 50_000 });
    await storage.setItem('p:id-salt', 'salt');
    for (let i = 0; i < 100; i++) await storage.setItem(`p:f:${i}`, 'x'.repeat(1_000));
    const keys = await storage.getKeys();
    expect(keys).toContain('p:id-salt');
    expect(keys.length).toBeLessThanOrEqual(50);
    expect(keys).toContain('p:f:99');
    expect(keys).not.toContain('p:f:0');
  });

  it('the restore line stays short however many cells failed', () => {
    const failed = Array.from({ length: 200 }, (_, i) => ({
      cell: i + 1,
      status: 'error' as const,
      error: `NameError: ${'y'.repeat(190)}`,
    }));
    const summary = restoreSummary({
      restore: {
        ...{ method: 'replay', reason: 'stopped', cells: 1, failed, dropped: 3, notRerun: 2 },
        ...{ missingFiles: Array.from({ length: 500 }, (_, i) => `f${i}.csv`), ms: 1, summary: '' },
      },
      kept: 203,
      outcome: 'restored',
      idleMs: 600_000,
    });
    expect(summary.length).toBeLessThanOrEqual(1_000);
    expect(summary).toContain('197 more cells failed when re-run');
  });
});
