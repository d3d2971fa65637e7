import { describe, expect, it } from 'vitest';
import { LexicalIndex } from '../../src/retrieval/lexical-index.ts';
import { toolFields } from '../../src/retrieval/tool-fields.ts';

const tools = [
  { name: 'get_weather', description: 'Current conditions for a city.' },
  {
    name: 'lookup_city',
    description: 'Find a city by name.',
    inputSchema: { properties: { weather: { type: 'string' } } },
  },
  { name: 'send_email', description: 'Send an email message to a recipient.' },
  { name: 'create_issue', description: 'Open a new issue.', server: 'github' },
];

function build(): LexicalIndex {
  const index = new LexicalIndex();
  tools.forEach((tool, slot) => index.set(slot, toolFields(tool)));
  return index;
}

describe('LexicalIndex (BM25F)', () => {
  it('ranks a name match above a parameter-name match', () => {
    const hits = build().search('weather', 2);
    expect(hits.map(h => h.slot)).toEqual([0, 1]);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
  });

  it('searches the server name', () => {
    expect(build().search('github', 1)[0]!.slot).toBe(3);
  });

  it('forgets deleted tools and updates document frequencies', () => {
    const index = build();
    const before = index.queryTerms('city').get('citi')!;
    index.delete(1);
    expect(index.search('weather', 5).map(h => h.slot)).toEqual([0]);
    expect(index.queryTerms('city').get('citi')!).toBeGreaterThan(before); // rarer now
    expect(index.size).toBe(3);
  });

  it('re-indexes a slot on set', () => {
    const index = build();
    index.set(2, toolFields({ name: 'play_music', description: 'Play a song.' }));
    expect(index.search('email', 5)).toEqual([]);
    expect(index.search('song', 5).map(h => h.slot)).toEqual([2]);
  });

  it('returns [] for queries without known words', () => {
    expect(build().search('zzzz qqqq', 5)).toEqual([]);
    expect(build().search('', 5)).toEqual([]);
  });

  it('splits per-term contributions that add up to the score', () => {
    const index = build();
    const terms = index.queryTerms('weather city');
    const contributions = index.contributions(terms);
    const total = [...contributions.values()].reduce((sum, m) => sum + (m.get(1) ?? 0), 0);
    expect(index.search(terms, 5).find(h => h.slot === 1)!.score).toBeCloseTo(total, 10);
  });

  it("replaces learned usage terms and keeps the tool's own", () => {
    const index = build();
    const before = index.search('email', 5)[0]!.score;
    expect(
      index.setUsage(
        2,
        new Map([
          ['forecast', 1],
          ['email', 0.5],
        ]),
        2,
      ),
    ).toBe(true);
    expect(index.search('forecast', 5).map(h => h.slot)).toEqual([2]);
    expect(index.search('email', 5)[0]!.score).toBeGreaterThan(before);
    // New usage replaces the old: a term only usage had is gone, the description's stays.
    index.setUsage(2, new Map([['song', 1]]), 1);
    expect(index.queryTerms('forecast').size).toBe(0);
    expect(index.search('email', 5)[0]!.score).toBeCloseTo(before, 5);
    expect(index.setUsage(9, new Map([['x', 1]]), 1)).toBe(false);
    index.delete(2);
    expect(index.queryTerms('song').size).toBe(0);
    expect(index.search('email', 5)).toEqual([]);
  });
});
