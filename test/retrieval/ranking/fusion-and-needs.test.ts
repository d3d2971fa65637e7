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

  it('confidence: the channel whose best candidate matches better leads', () => {
    // A full match of the query scores 20: the lexical best matches half of it (0.5), the dense
    // best 0.9, so the dense share is 0.9 / 1.4.
    const confidence = { method: 'confidence' } as const;
    const fused = fuseRankings(lexical, dense, confidence, 20);
    const share = 0.9 / 1.4;
    expect(fused.map(h => h.slot)).toEqual([2, 3, 1]);
    expect(fused[0]!.score).toBeCloseTo((1 - share) * 0.25 + share * 0.8, 10);
    // A weak dense best (0.1) hands the lead to the lexical channel.
    const weak = dense.map(hit => ({ ...hit, score: hit.score / 9 }));
    expect(fuseRankings(lexical, weak, confidence, 20)[0]!.slot).toBe(1);
    // Without a lexical scale (no query terms), only the dense channel counts.
    expect(fuseRankings(lexical, dense, confidence, 0)[0]!.slot).toBe(3);
  });

  it('zscore (the default): standard scores over each channel, the dense channel at 0.3', () => {
    // Standard scores over as many candidates as the dense channel has (3), the lexical channel's
    // unlisted one at BM25 0: lexical [10, 5, 0] -> slot 1 2.449, slot 2 1.225; dense [0.9,
    // 0.8, 0.1] from its lowest -> slot 3 2.248, slot 2 1.967, slot 1 0.
    const lexicalSd = Math.sqrt(50 / 3);
    const denseSd = Math.sqrt(0.38 / 3);
    const fused = fuseRankings(lexical, dense);
    // 0.7 * 2.449 = 1.715; 0.7 * 1.225 + 0.3 * 1.967 = 1.447; 0.3 * 2.248 = 0.674.
    expect(fused.map(h => h.slot)).toEqual([1, 2, 3]);
    expect(fused[0]!.score).toBeCloseTo((0.7 * 10) / lexicalSd, 10);
    expect(fused[2]!.score).toBeCloseTo((0.3 * 0.8) / denseSd, 10);
    // Half and half, the tool both channels like leads.
    expect(fuseRankings(lexical, dense, { denseWeight: 0.5 }).map(h => h.slot)).toEqual([2, 1, 3]);
    // Scale-free: the same cosines ten times closer together rank the same.
    const flat = dense.map(hit => ({ ...hit, score: 0.5 + (hit.score - 0.5) / 10 }));
    expect(fuseRankings(lexical, flat).map(h => h.slot)).toEqual([1, 2, 3]);
  });

  it('zscore: a query that matches one tool lexically still gives it a standard score', () => {
    // Lexical [10, 0, 0]: slot 1 at 10 / 4.714 = 2.121, ahead of the dense best (0.3 * 2.248).
    const fused = fuseRankings([{ slot: 1, score: 10 }], dense);
    expect(fused.map(h => h.slot)).toEqual([1, 3, 2]);
    expect(fused[0]!.score).toBeCloseTo((0.7 * 10) / Math.sqrt(200 / 9), 10);
  });

  it('rerank', () => {
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
