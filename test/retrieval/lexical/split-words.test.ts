import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../helpers/seeded-random.ts';
import { splitWords, visitWords } from '../../../src/retrieval/lexical/split-words.ts';

// The case split as the regular expressions define it, applied to every ASCII chunk.
function reference(text: string): [string, boolean][] {
  const out: [string, boolean][] = [];
  for (const chunk of text.split(/[^A-Za-z0-9]+/)) {
    if (chunk === '') continue;
    const parts = chunk
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .replace(/([A-Z])([A-Z][a-z])/g, '$1 $2')
      .toLowerCase()
      .split(' ');
    for (const part of parts) out.push([part, false]);
    if (parts.length > 1) out.push([chunk.toLowerCase(), true]);
  }
  return out;
}

describe('visitWords', () => {
  it('splits names as they are written', () => {
    expect(splitWords('getHTTPResponse_v2')).toEqual(['get', 'http', 'response', 'v2']);
    expect(splitWords('Get the URL of a GitHub repo')).toEqual([
      'get',
      'the',
      'url',
      'of',
      'a',
      'git',
      'hub',
      'repo',
    ]);
  });

  it('gives, for any ASCII text, the words and joined forms the case patterns define', () => {
    // Chunks only lower-cased (no case boundary) must come out as the patterns make them too.
    const random = seededRandom(11);
    const alphabet = 'aAbB1zZ_ .-';
    for (let round = 0; round < 2000; round++) {
      const text = Array.from(
        { length: 1 + random(12) },
        () => alphabet[random(alphabet.length)],
      ).join('');
      const got: [string, boolean][] = [];
      visitWords(text, (word, joined) => void got.push([word, joined]));
      expect(got, text).toEqual(reference(text));
    }
  });
});
