// Whole-catalog snapshots of the lexical analysis: an unchanged catalog is not tokenised again on
// a warm start, the index ranks exactly as the one that tokenised it, and terms a tool's text does
// not have (a bug, a forged store value) are found once the tool is a candidate, before ranking.
import { join } from 'node:path';
import { createStorage, type Storage } from 'unstorage';
import { describe, expect, it, vi } from 'vitest';
import {
  ANALYSIS_CHUNK_ROWS,
  analyzerFingerprint,
  decodeAnalysisChunk,
  encodeAnalysis,
} from '../../../src/retrieval/snapshots/analysis-snapshot.ts';
import { snapshotCatalog } from '../../../src/retrieval/snapshots/catalog-snapshot.ts';
import { readEvalQueries, readToolCatalog } from '../../../src/retrieval/eval/catalog-file.ts';
import { createToolIndex } from '../../../src/retrieval/create-tool-index.ts';
import {
  type EmbeddingCacheEvent,
  createEmbeddingCache,
} from '../../../src/retrieval/embedding-cache.ts';
import { LexicalIndex } from '../../../src/retrieval/lexical/lexical-index.ts';
import {
  type TermCounts,
  sameToolText,
  termCountsOf,
} from '../../../src/retrieval/lexical/term-counts.ts';
import { FIELD_NAMES, toolFields } from '../../../src/retrieval/tool-fields.ts';
import { toolHash } from '../../../src/retrieval/tool-text.ts';
import type { ToolDescriptor } from '../../../src/retrieval/types.ts';
import { hashingEmbeddingModel } from '../../helpers/hashing-embedding-model.ts';

const dev = join(import.meta.dirname, '..', '..', 'fixtures', 'eval', 'dev');
const catalog = await readToolCatalog(join(dev, 'tools.jsonl'));
const queries = (await readEvalQueries(join(dev, 'queries.jsonl'))).slice(0, 40);
const analyzer = new LexicalIndex();
const countsOf = (tool: ToolDescriptor) => termCountsOf(analyzer.analyze(toolFields(tool)));

/** A catalog's analysis chunks as the store would hold them, and what decoding expects. */
function encoded(tools: readonly ToolDescriptor[], bytes: boolean) {
  const { keys, hash } = snapshotCatalog(tools.map(toolHash));
  const byHash = new Map(tools.map(tool => [toolHash(tool), countsOf(tool)]));
  const rows = keys.map(key => byHash.get(key)!);
  const chunks = encodeAnalysis({ hash, rows, bytes })!;
  return { rows, chunks, at: (chunk: number) => ({ hash, chunk, total: rows.length }) };
}

const same = (a: TermCounts, b: TermCounts) =>
  a.terms.join() === b.terms.join() &&
  a.tf.join() === b.tf.join() &&
  a.lengths.join() === b.lengths.join();

/** A lexical (or hybrid) index on `store` that records its cache events. */
function indexOn(store: Storage, { hybrid = false, maxSnapshots = 4 } = {}) {
  const events: EmbeddingCacheEvent[] = [];
  const cache = createEmbeddingCache({ store, maxSnapshots, onEvent: event => events.push(event) });
  const index = createToolIndex({
    cache,
    // Exact vectors before ranking: the lexical channel is what differs between starts here.
    ...(hybrid
      ? { embeddingModel: hashingEmbeddingModel({ dimensions: 64 }), rescore: 'before' }
      : {}),
  });
  return { index, events };
}

const analysisReads = (events: EmbeddingCacheEvent[]) =>
  events.filter(event => event.type === 'read' && event.analysis === true);

async function rankings(index: ReturnType<typeof createToolIndex>) {
  const out: string[] = [];
  for (const { query } of queries) {
    const hits = await index.search(query, { topK: 10 });
    out.push(hits.map(({ name, score }) => `${name}:${score.toFixed(6)}`).join(' '));
  }
  return out;
}

describe('analysis snapshots', () => {
  it('encode every tool and decode it as it was, from text and from bytes at any offset', () => {
    for (const bytes of [false, true]) {
      const { rows, chunks, at } = encoded(catalog, bytes);
      expect(chunks).toHaveLength(Math.ceil(catalog.length / ANALYSIS_CHUNK_ROWS));
      const decoded = chunks.flatMap((chunk, c) => {
        // A value read from Redis is a view into a larger buffer, at any offset.
        const value = typeof chunk === 'string' ? chunk : new Uint8Array([7, ...chunk]).subarray(1);
        const result = decodeAnalysisChunk(value, at(c));
        if ('invalid' in result) throw new Error(result.invalid);
        return result.rows;
      });
      expect(decoded).toHaveLength(rows.length);
      decoded.forEach((row, i) => expect(same(row, rows[i]!)).toBe(true));
    }
  });

  it('refuse chunks of another catalog, analyser or position, and inconsistent rows', () => {
    const tools = catalog.slice(0, 100);
    const { chunks, at } = encoded(tools, true);
    const chunk = chunks[0] as Uint8Array;
    const text = encoded(tools, false).chunks[0] as string;
    const header = text.slice(0, text.lastIndexOf('|') + 1);
    const payloadAt = header.length;
    // The payload's sections, as encodePayload lays them out.
    const u32 = (value: Uint8Array) => new Uint32Array(value.slice(payloadAt).buffer, 0, 4);
    const [rows, terms, dictionaryBytes, entries] = u32(chunk);
    const words = 4 + rows! * 6 + entries!;
    const forge = (edit: (payload: Uint8Array, view: Uint32Array) => void) => {
      const payload = chunk.slice(payloadAt);
      edit(payload, new Uint32Array(payload.buffer, 0, words));
      const value = new Uint8Array(chunk.length);
      value.set(chunk.subarray(0, payloadAt));
      value.set(payload, payloadAt);
      return value;
    };
    const firstId = 4 + rows! * 6;
    const countsAt = words * 4 + dictionaryBytes!;
    const cases: [unknown, string | RegExp][] = [
      [42, 'not an analysis chunk'],
      [text.replace('aitb-lex1|', 'aitb-lex0|'), 'not an analysis chunk'],
      [text.replace(at(0).hash, 'x'.repeat(43)), 'a chunk of another catalog'],
      [
        text.replace(`|${analyzerFingerprint()}|`, `|${'y'.repeat(22)}|`),
        'made by another analyser',
      ],
      [text.replace('|100|100|0|', '|100|100|1|'), /^chunk 1 of 100 rows, expected 0 of 100$/],
      [`${text.slice(0, -4)}!!!!`, 'not base64'],
      [chunk.subarray(0, chunk.length - 1), 'wrong payload length'],
      [forge((_, view) => (view[firstId] = terms!)), /^row 0: a bad or repeated term$/],
      [forge((_, view) => (view[firstId + 1] = view[firstId]!)), /^row 0: a bad or repeated term$/],
      [
        forge(payload => payload.fill(0, countsAt, countsAt + 5)),
        /^row 0: a term without a count$/,
      ],
      [forge((_, view) => view[4 + rows!]!++), /^row 0: lengths that are not the counts' sums$/],
      [forge(payload => (payload[words * 4] = 10)), 'a bad dictionary'],
    ];
    for (const [value, reason] of cases) {
      const result = decodeAnalysisChunk(value, at(0));
      expect(result, String(reason)).toEqual({ invalid: expect.stringMatching(reason) });
    }
    // A count the format cannot hold: no snapshot rather than a wrong one.
    const many = {
      terms: ['word'],
      tf: new Float32Array([300, 0, 0, 0, 0, 0]),
      lengths: new Float32Array([300, 0, 0, 0, 0, 0]),
    };
    expect(encodeAnalysis({ hash: at(0).hash, rows: [many], bytes: true })).toBeUndefined();
  });

  it('compare the text a tool was indexed with, leaving learned usage out', () => {
    // A snapshot stores every field before usage, which must stay the last one.
    expect(FIELD_NAMES.indexOf('usage')).toBe(FIELD_NAMES.length - 1);
    const tool = catalog[0]!;
    const fresh = countsOf(tool);
    const index = new LexicalIndex();
    index.set(0, fresh);
    index.setUsage(0, new Map([['rainfal', 1]]), 1);
    expect(sameToolText(index.termCounts(0)!, fresh)).toBe(true);
    expect(
      sameToolText(index.termCounts(0)!, countsOf({ ...tool, description: 'other words' })),
    ).toBe(false);
    const extra = termCountsOf({
      tokens: [...analyzer.analyze(toolFields(tool)).tokens.slice(0, 5), []],
    });
    expect(sameToolText(extra, fresh)).toBe(true);
    const tf = fresh.tf.slice();
    tf[0]! += 1;
    expect(sameToolText({ ...fresh, tf }, fresh)).toBe(false);
  });

  it('skip tokenising an unchanged catalog and rank exactly like the index that tokenised it', async () => {
    for (const hybrid of [false, true]) {
      const store = createStorage();
      const cold = indexOn(store, { hybrid });
      await cold.index.upsert(catalog);
      expect(analysisReads(cold.events)).toEqual([expect.objectContaining({ hits: 0 })]);
      const keys = (await store.getKeys()).filter(key => key.includes(':analysis:'));
      expect(keys).toHaveLength(Math.ceil(catalog.length / ANALYSIS_CHUNK_ROWS));
      const expected = await rankings(cold.index);

      const warm = indexOn(store, { hybrid });
      await warm.index.upsert(catalog);
      expect(analysisReads(warm.events)).toEqual([
        expect.objectContaining({ snapshot: true, texts: catalog.length, hits: catalog.length }),
      ]);
      expect(await rankings(warm.index)).toEqual(expected);
      // Every candidate's terms matched its text: nothing was dropped.
      expect(warm.events.filter(event => event.type === 'invalid-entry')).toEqual([]);
    }
  }, 60_000);

  it('find terms a tool does not have once it is a candidate: drop the snapshot and tokenise again', async () => {
    const store = createStorage();
    const tools = catalog.slice(0, 300);
    await indexOn(store).index.upsert(tools);
    const [key, ...others] = (await store.getKeys()).filter(k => k.includes(':analysis:'));
    expect(others).toEqual([]);
    // Tool 5 gains a name term its text does not have, its lengths kept consistent.
    const { rows, at } = encoded(tools, false);
    const row = snapshotCatalog(tools.map(toolHash)).keys.indexOf(toolHash(tools[5]!));
    const { terms, tf, lengths } = rows[row]!;
    const forgedTf = new Float32Array(tf.length + 6);
    forgedTf.set(tf);
    forgedTf[tf.length] = 2;
    const forgedLengths = lengths.slice();
    forgedLengths[0]! += 2;
    rows[row] = { terms: [...terms, 'zzyzx'], tf: forgedTf, lengths: forgedLengths };
    const [forged] = encodeAnalysis({ hash: at(0).hash, rows, bytes: false })!;
    await store.setItem(key!, forged!);

    const reference = createToolIndex();
    await reference.upsert(tools);
    const warm = indexOn(store);
    await warm.index.upsert(tools);
    expect(analysisReads(warm.events)).toEqual([expect.objectContaining({ hits: tools.length })]);
    const version = warm.index.version;
    // Only the forged term could make tool 5 a candidate: it is checked before ranking.
    expect(await warm.index.search('zzyzx', { topK: 5 })).toEqual([]);
    expect(warm.index.version).toBeGreaterThan(version);
    expect(warm.events).toContainEqual({
      type: 'invalid-entry',
      key,
      reason: 'terms that differ from the tool text',
    });
    await vi.waitFor(async () => expect(await store.hasItem(key!)).toBe(false));
    // Every tool of the snapshot was tokenised again.
    expect(await rankings(warm.index)).toEqual(await rankings(reference));
  }, 60_000);

  it('neither read nor write a snapshot with maxSnapshots 0 or for a small catalog', async () => {
    for (const [maxSnapshots, tools] of [
      [0, catalog.slice(0, 300)],
      [4, catalog.slice(0, 63)],
    ] as const) {
      const store = createStorage();
      for (let start = 0; start < 2; start++) {
        const { index, events } = indexOn(store, { maxSnapshots });
        await index.upsert(tools);
        expect(analysisReads(events)).toEqual([]);
      }
      expect((await store.getKeys()).filter(k => k.includes(':analys'))).toEqual([]);
    }
  });
});
