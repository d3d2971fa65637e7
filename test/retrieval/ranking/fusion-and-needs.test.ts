import { describe, expect, it } from 'vitest';
import { fuseRankings } from '../../../src/retrieval/ranking/fusion.ts';
import { splitNeeds } from '../../../src/retrieval/ranking/split-needs.ts';

describe('fuseRankings', () => {
  const lexical = [
    { slot: 1, score: 10 },
    { slot: 2, score: 5 },
  ];
  const dense = [
    { slot: 3, score: 0.9 },
    { slot: 2, score: 0.8 },
    { slot: 1, score: 0.1 },
  ];

  it('convex: mixes max-normalised BM25 with min-max-normalised cosine', () => {
    const fused = fuseRankings(lexical, dense, { method: 'convex', denseWeight: 0.5 });
    // slot 2: 0.5*0.5 + 0.5*(0.7/0.8); slot 1: 0.5*1 + 0; slot 3: 0 + 0.5*1
    expect(fused.map(h => h.slot)).toEqual([2, 1, 3]);
    expect(fused[0]!.score).toBeCloseTo(0.25 + 0.4375, 10);
  });

  it('convex with weight 0 or 1 reproduces one channel', () => {
    expect(
      fuseRankings(lexical, dense, { method: 'convex', denseWeight: 0 })
        .slice(0, 2)
        .map(h => h.slot),
    ).toEqual([1, 2]);
    expect(fuseRankings(lexical, dense, { method: 'convex', denseWeight: 1 })[0]!.slot).toBe(3);
  });

  it('confidence (the default): the channel whose best candidate matches better leads', () => {
    // A full match of the query scores 20: the lexical best matches half of it (0.5), the dense
    // best 0.9, so the dense share is 0.9 / 1.4.
    const fused = fuseRankings(lexical, dense, {}, 20);
    const share = 0.9 / 1.4;
    expect(fused.map(h => h.slot)).toEqual([2, 3, 1]);
    expect(fused[0]!.score).toBeCloseTo((1 - share) * 0.25 + share * 0.8, 10);
    // A weak dense best (0.1) hands the lead to the lexical channel.
    const weak = dense.map(hit => ({ ...hit, score: hit.score / 9 }));
    expect(fuseRankings(lexical, weak, {}, 20)[0]!.slot).toBe(1);
    // Without a lexical scale (no query terms), only the dense channel counts.
    expect(fuseRankings(lexical, dense, {}, 0)[0]!.slot).toBe(3);
  });

  it('zscore and rerank', () => {
    // Standard scores over each channel's candidates, its lowest counting 0: slot 3 (2.25) beats
    // slot 1 (2.0) and slot 2 (1.97).
    expect(fuseRankings(lexical, dense, { method: 'zscore' }).map(h => h.slot)).toEqual([3, 1, 2]);
    // The lexical candidates first, by cosine; then the dense-only one.
    expect(fuseRankings(lexical, dense, { method: 'rerank' }).map(h => h.slot)).toEqual([2, 1, 3]);
  });

  it('rrf: ranks only', () => {
    const fused = fuseRankings(lexical, dense.slice(0, 2), { method: 'rrf', denseWeight: 0.5 });
    expect(fused.map(h => h.slot)).toEqual([2, 1, 3]); // 2nd in both beats 1st in one
    expect(fused[0]!.score).toBeCloseTo(0.5 / 62 + 0.5 / 62, 12);
  });
});

describe('splitNeeds', () => {
  it('splits on sentences and chaining words, dropping empty fragments', () => {
    expect(splitNeeds('Find the sales trend and chart it, then save a PDF. Thanks!')).toEqual([
      'Find the sales trend',
      'chart it',
      'save a PDF',
      'Thanks',
    ]);
    expect(splitNeeds('Play some jazz. Also, will it rain tomorrow?')).toEqual([
      'Play some jazz',
      'will it rain tomorrow',
    ]);
    expect(splitNeeds('What is the weather in Paris')).toEqual(['What is the weather in Paris']);
    expect(splitNeeds('and then, also.')).toEqual([]);
  });
});
