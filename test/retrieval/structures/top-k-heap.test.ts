import { describe, expect, it } from 'vitest';
import { TopKHeap } from '../../../src/retrieval/structures/top-k-heap.ts';

function seeded(seed: number): () => number {
  let s = seed;
  return () => ((s = Math.imul(s ^ (s >>> 15), 2246822507) + 0x9e3779b9) >>> 0) / 2 ** 32;
}

describe('TopKHeap', () => {
  it('keeps exactly the k best, best first, like a full sort', () => {
    const random = seeded(7);
    for (const k of [1, 3, 10, 50]) {
      const scores = Array.from({ length: 500 }, () => Math.round(random() * 100) / 10); // many ties
      const heap = new TopKHeap(k);
      scores.forEach((score, id) => heap.push(id, score));
      const expected = scores
        .map((score, id) => ({ id, score }))
        .sort((a, b) => b.score - a.score || a.id - b.id)
        .slice(0, k);
      expect(heap.sorted()).toEqual(expected);
    }
  });

  it('returns fewer when given fewer, nothing for k = 0, and ignores NaN', () => {
    const heap = new TopKHeap(5);
    heap.push(1, 0.5);
    heap.push(2, Number.NaN);
    expect(heap.sorted()).toEqual([{ id: 1, score: 0.5 }]);
    const none = new TopKHeap(0);
    none.push(1, 1);
    expect(none.sorted()).toEqual([]);
  });

  it('exposes the admission threshold once full', () => {
    const heap = new TopKHeap(2);
    expect(heap.threshold).toBe(-Infinity);
    heap.push(1, 3);
    heap.push(2, 1);
    expect(heap.threshold).toBe(1);
    heap.push(3, 2);
    expect(heap.threshold).toBe(2);
  });
});
