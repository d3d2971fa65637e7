import { describe, expect, it } from 'vitest';
import { PostingList } from '../../../src/retrieval/structures/posting-list.ts';

const pairs = (list: PostingList) =>
  Array.from({ length: list.size }, (_, i) => [list.slotAt(i), list.positionAt(i)]);

describe('PostingList', () => {
  it('grows past its first capacity and keeps every pair', () => {
    const list = new PostingList();
    for (let slot = 0; slot < 100; slot++) expect(list.add(slot, slot % 7)).toBe(slot);
    expect(list.size).toBe(100);
    expect(pairs(list)).toEqual(Array.from({ length: 100 }, (_, slot) => [slot, slot % 7]));
  });

  it('moves the last pair into a removed one and says where it went', () => {
    const list = new PostingList();
    [10, 11, 12, 13].forEach((slot, position) => list.add(slot, position));
    const moves: number[][] = [];
    list.removeAt(1, (slot, position, index) => moves.push([slot, position, index]));
    expect(moves).toEqual([[13, 3, 1]]);
    expect(pairs(list)).toEqual([
      [10, 0],
      [13, 3],
      [12, 2],
    ]);
    // Removing the last pair moves nothing.
    list.removeAt(2, () => moves.push([]));
    expect(moves).toHaveLength(1);
    expect(pairs(list)).toEqual([
      [10, 0],
      [13, 3],
    ]);
  });
});
