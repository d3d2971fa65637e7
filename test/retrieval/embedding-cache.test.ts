import { mkdtemp, readFile, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createToolIndex } from '../../src/retrieval/create-tool-index.ts';
import { createEmbeddingCache, embeddingCacheKey } from '../../src/retrieval/embedding-cache.ts';
import { embeddedCount, hashingEmbeddingModel } from '../helpers/hashing-embedding-model.ts';

const tools = Array.from({ length: 30 }, (_, i) => ({
  name: `tool_${i}`,
  description: `does thing ${i} with widgets`,
}));

describe('embedding cache', () => {
  it('persists to disk so a restart re-embeds nothing', async () => {
    const path = join(
      await mkdtemp(join(tmpdir(), 'toolbelt-cache-')),
      'nested',
      'embeddings.jsonl',
    );
    const first = hashingEmbeddingModel();
    await createToolIndex({ embeddingModel: first, cache: path }).upsert(tools);
    expect(embeddedCount(first)).toBe(30);

    const second = hashingEmbeddingModel(); // same model id: a restarted process
    const index = createToolIndex({ embeddingModel: second, cache: path });
    await index.upsert(tools);
    expect(embeddedCount(second)).toBe(0);
    expect((await index.search('thing 7 widgets', { topK: 1 })).length).toBe(1);
  });

  it('keys by model id, so another model never reuses vectors', async () => {
    expect(embeddingCacheKey('a', 'text')).not.toBe(embeddingCacheKey('b', 'text'));
    const path = join(await mkdtemp(join(tmpdir(), 'toolbelt-cache-')), 'e.jsonl');
    await createToolIndex({
      embeddingModel: hashingEmbeddingModel({ modelId: 'one' }),
      cache: path,
    }).upsert(tools);
    const other = hashingEmbeddingModel({ modelId: 'two' });
    await createToolIndex({ embeddingModel: other, cache: path }).upsert(tools);
    expect(embeddedCount(other)).toBe(30);
  });

  it('survives a torn last line and garbage', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'toolbelt-cache-')), 'e.jsonl');
    const cache = createEmbeddingCache({ path });
    await cache.set([{ key: 'k1', vector: Float32Array.of(1, 2, 3) }]);
    await appendFile(path, '{"k":"k2","v":"AAAA');
    const reloaded = createEmbeddingCache({ path });
    expect(Array.from((await reloaded.get('k1'))!)).toEqual([1, 2, 3]);
    expect(await reloaded.get('k2')).toBeUndefined();
    await writeFile(path, 'not json\n');
    expect(await createEmbeddingCache({ path }).get('k1')).toBeUndefined();
    expect(await readFile(path, 'utf8')).toBe('not json\n');
  });

  it('evicts the oldest entries beyond maxEntries', async () => {
    const cache = createEmbeddingCache({ maxEntries: 2 });
    await cache.set([
      { key: 'a', vector: Float32Array.of(1) },
      { key: 'b', vector: Float32Array.of(2) },
      { key: 'c', vector: Float32Array.of(3) },
    ]);
    expect(await cache.get('a')).toBeUndefined();
    expect(Array.from((await cache.get('c'))!)).toEqual([3]);
  });
});
