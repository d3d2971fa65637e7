import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../helpers/seeded-random.ts';
import { LexicalIndex } from '../../../src/retrieval/lexical/lexical-index.ts';
import { toolFields } from '../../../src/retrieval/tool-fields.ts';

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

  it('after any mix of sets, usage and deletes, scores as an index built from what is left', () => {
    // A small vocabulary, so terms are shared and posting lists see removals in the middle.
    const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];
    const random = seededRandom(7);
    const text = (n: number) =>
      Array.from({ length: n }, () => words[random(words.length)]).join(' ');
    const index = new LexicalIndex();
    const live = new Map<
      number,
      { fields: ReturnType<typeof toolFields>; usage?: [string, number] }
    >();
    for (let step = 0; step < 400; step++) {
      const slot = random(40);
      const action = random(4);
      if (action === 0) {
        index.delete(slot);
        live.delete(slot);
      } else if (action === 1 && live.has(slot)) {
        const term = words[random(words.length)]!;
        index.setUsage(slot, new Map([[term, 1]]), 1);
        live.get(slot)!.usage = [term, 1];
      } else {
        const fields = toolFields({ name: `t${step}`, description: text(1 + random(6)) });
        index.set(slot, fields);
        live.set(slot, { fields });
      }
    }
    const fresh = new LexicalIndex();
    for (const [slot, { fields, usage }] of live) {
      fresh.set(slot, fields);
      if (usage) fresh.setUsage(slot, new Map([usage]), usage[1]);
    }
    expect(index.size).toBe(live.size);
    for (const query of ['alpha', 'bravo delta', 'echo golf hotel', 'charlie foxtrot alpha']) {
      const got = new Map(index.search(query, 50).map(hit => [hit.slot, hit.score]));
      const want = new Map(fresh.search(query, 50).map(hit => [hit.slot, hit.score]));
      expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
      for (const [slot, score] of want) expect(got.get(slot)).toBeCloseTo(score, 9);
    }
  });
});
