import { describe, expect, it } from 'vitest';
import { DimensionMismatchError } from '../../../src/errors/dimension-mismatch-error.ts';
import { InvalidArgumentError } from '../../../src/errors/invalid-argument-error.ts';
import { VectorIndex } from '../../../src/retrieval/dense/vector-index.ts';

function randomVectors(count: number, dims: number, seed = 1): Float32Array[] {
  let s = seed;
  const random = (): number => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  return Array.from({ length: count }, () => Float32Array.from({ length: dims }, random));
}

function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
}

describe('VectorIndex', () => {
  it('finds the same top-k as a brute-force cosine sort', () => {
    const vectors = randomVectors(1000, 37);
    const index = new VectorIndex();
    vectors.forEach((v, slot) => index.set(slot, v));
    for (const query of randomVectors(5, 37, 99)) {
      const expected = vectors
        .map((v, slot) => ({ slot, score: cosine(v, query) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, 10);
      const got = index.search(query, 10);
      expect(got.map(h => h.slot)).toEqual(expected.map(h => h.slot));
      got.forEach((hit, i) => expect(hit.score).toBeCloseTo(expected[i]!.score, 5));
    }
  });

  it('gives the same results with and without the SIMD kernel', () => {
    const vectors = randomVectors(300, 50); // 50 pads to a stride of 64
    const fast = new VectorIndex();
    const plain = new VectorIndex({ accelerate: false });
    vectors.forEach((v, slot) => {
      fast.set(slot, v);
      plain.set(slot, v);
    });
    expect(fast.accelerated).toBe(true); // Node supports WebAssembly SIMD
    expect(plain.accelerated).toBe(false);
    for (const query of randomVectors(3, 50, 5)) {
      const a = fast.search(query, 7);
      const b = plain.search(query, 7);
      expect(a.map(h => h.slot)).toEqual(b.map(h => h.slot));
      a.forEach((hit, i) => expect(hit.score).toBeCloseTo(b[i]!.score, 5));
    }
  });

  it('keeps rows when storage grows', () => {
    const index = new VectorIndex();
    const vectors = randomVectors(200, 16, 3);
    vectors.forEach((v, slot) => index.set(slot, v)); // grows many times from 16 rows
    vectors.forEach((v, slot) =>
      expect(index.search(v, 1)[0]).toEqual({ slot, score: expect.closeTo(1, 5) }),
    );
  });

  it('replaces, deletes and filters by slot', () => {
    const index = new VectorIndex({ dimensions: 2 });
    index.set(0, [1, 0]);
    index.set(1, [0, 1]);
    index.set(2, [1, 1]);
    expect(index.search([1, 0], 1)[0]!.slot).toBe(0);
    index.delete(0);
    expect(index.size).toBe(2);
    expect(index.search([1, 0], 1)[0]!.slot).toBe(2);
    expect(index.search([1, 0], 3, slot => slot !== 2).map(h => h.slot)).toEqual([1]);
    index.set(1, [1, 0]);
    expect(index.search([1, 0], 1)[0]).toEqual({ slot: 1, score: expect.closeTo(1, 6) });
  });

  it('returns [] for topK < 1 and for an empty index', () => {
    const index = new VectorIndex();
    expect(index.search([1, 2], 5)).toEqual([]);
    index.set(0, [1, 2]);
    expect(index.search([1, 2], 0)).toEqual([]);
  });

  it('rejects mismatched dimensions and NaN with typed errors', () => {
    const index = new VectorIndex();
    index.set(0, [1, 2, 3]);
    expect(() => index.set(1, [1, 2])).toThrow(DimensionMismatchError);
    expect(() => index.search([1, 2], 1)).toThrow(/expected 3, got 2/);
    expect(() => index.set(1, [1, Number.NaN, 3])).toThrow(InvalidArgumentError);
    expect(() => index.search([1, Number.NaN, 3], 1)).toThrow(/NaN/);
  });

  it('stores vectors in one buffer within 1.2x of the raw bytes once reserved', () => {
    const dims = 256; // the smallest common embedding size; memory grows in 64 KiB pages
    const index = new VectorIndex({ dimensions: dims, initialCapacity: 1000 });
    randomVectors(1000, dims).forEach((v, slot) => index.set(slot, v));
    expect(index.byteLength / (1000 * dims * 4)).toBeLessThanOrEqual(1.2);
  });

  it('keeps int8 rows as int8, ranking as their dequantized vectors do, on both kernels', () => {
    const dims = 50;
    const codes = randomVectors(400, dims, 7).map(v => Int8Array.from(v, x => Math.round(x * 127)));
    const exact = randomVectors(400, dims, 8);
    for (const accelerate of [true, false]) {
      // Slots alternate: int8 codes (approximate, as from a snapshot) and float32 vectors.
      const mixed = new VectorIndex({ accelerate });
      const floats = new VectorIndex({ accelerate });
      codes.forEach((c, i) => {
        const vector = i % 2 === 0 ? c : exact[i]!;
        mixed.set(i, vector, { approximate: i % 2 === 0 });
        floats.set(i, Float32Array.from(vector));
      });
      expect(mixed.approximateCount).toBe(200);
      expect(mixed.isApproximate(0)).toBe(true);
      expect(mixed.isApproximate(1)).toBe(false);
      for (const query of randomVectors(4, dims, 9)) {
        const a = mixed.search(query, 10);
        const b = floats.search(query, 10);
        expect(a.map(h => h.slot)).toEqual(b.map(h => h.slot));
        a.forEach((hit, i) => expect(hit.score).toBeCloseTo(b[i]!.score, 5));
      }
      // get() gives the normalised vector either way.
      expect(cosine(mixed.get(0)!, codes[0]!)).toBeCloseTo(1, 6);
      expect(Math.hypot(...mixed.get(0)!)).toBeCloseTo(1, 6);
      // An exact vector replaces the int8 one; deleting empties the slot.
      mixed.set(0, exact[0]!);
      expect(mixed.isApproximate(0)).toBe(false);
      expect(mixed.search(exact[0]!, 1)[0]).toEqual({ slot: 0, score: expect.closeTo(1, 5) });
      mixed.delete(2);
      expect(mixed.search(codes[2]!, 400).map(h => h.slot)).not.toContain(2);
      expect(mixed.get(2)).toBeUndefined();
    }
  });

  it('keeps int8 and float32 rows when storage grows after both were stored', () => {
    for (const accelerate of [true, false]) {
      const index = new VectorIndex({ accelerate });
      const vectors = randomVectors(300, 24, 11);
      // The int8 region is laid out at the first int8 row, then moves with every growth.
      vectors.forEach((v, slot) =>
        index.set(slot, slot % 3 === 0 ? Int8Array.from(v, x => Math.round(x * 127)) : v),
      );
      vectors.forEach((v, slot) => {
        const hit = index.search(v, 1)[0]!;
        expect(hit.slot).toBe(slot);
        expect(hit.score).toBeGreaterThan(slot % 3 === 0 ? 0.99 : 0.99999);
      });
    }
  });

  it('holds int8 rows in a quarter of the bytes float32 rows take', () => {
    const dims = 1536;
    const rows = 1000;
    const codes = randomVectors(rows, dims).map(v => Int8Array.from(v, x => Math.round(x * 127)));
    const index = new VectorIndex({ dimensions: dims, initialCapacity: rows });
    const before = index.byteLength;
    codes.forEach((c, slot) => index.set(slot, c, { approximate: true }));
    // The int8 region is added when the first int8 row arrives: rows * dims bytes (and a page).
    expect((index.byteLength - before) / (rows * dims)).toBeGreaterThanOrEqual(1);
    expect((index.byteLength - before) / (rows * dims)).toBeLessThan(1.05);
  });

  it('finds float32 rows stored after growth over int8 rows, whatever the moved regions held', () => {
    // 20 dimensions pad to 32: padding a row does not write would hold the int8 codes that
    // sat there before growth (these bytes read as float32 are NaN), and rows never written
    // would read leftover kind bytes.
    const dims = 20;
    const codes = Int8Array.from({ length: dims }, (_, i) => [127, 5, -9, -1][i % 4]!);
    const floats = randomVectors(8, dims, 21);
    const index = new VectorIndex({ dimensions: dims, initialCapacity: 16 });
    for (let slot = 0; slot < 16; slot++) index.set(slot, codes, { approximate: true });
    floats.forEach((vector, i) => index.set(16 + i, vector));
    index.set(60, floats[0]!); // slots 24..59 never written
    floats.forEach((vector, i) => expect(index.search(vector, 1)[0]!.slot).toBe(16 + i));
    const all = index.search(floats[1]!, 100).map(hit => hit.slot);
    expect(all.every(slot => slot < 24 || slot === 60)).toBe(true);
    expect(all).toHaveLength(25);
  });
});
