import { describe, expect, it } from 'vitest';
import { splitWords } from '../../../src/retrieval/lexical/split-words.ts';
import { tokenize } from '../../../src/retrieval/lexical/tokenize.ts';
import { toolFields } from '../../../src/retrieval/tool-fields.ts';
import { toolEmbeddingText } from '../../../src/retrieval/tool-text.ts';

describe('tokenize', () => {
  it('splits camelCase, snake_case, kebab-case and dotted names and keeps compounds', () => {
    expect(tokenize('github.createPullRequest', { stem: false })).toEqual([
      'github',
      'create',
      'pull',
      'request',
      'createpullrequest',
    ]);
    expect(tokenize('get_weather-forecast', { stem: false })).toEqual([
      'get',
      'weather',
      'forecast',
    ]);
    expect(tokenize('getHTTPResponse', { stem: false })).toEqual([
      'get',
      'http',
      'response',
      'gethttpresponse',
    ]);
  });

  it('matches "GitHub" with "github"', () => {
    expect(tokenize('GitHub')).toContain('github');
  });

  it('drops numbers, single letters and stop words, and stems', () => {
    expect(tokenize('Please show me the forecasts for 2024 in a city')).toEqual([
      'show',
      'forecast',
      'citi',
    ]);
  });

  it('keeps stop words when asked', () => {
    expect(tokenize('the weather', { dropStopWords: false, stem: false })).toEqual([
      'the',
      'weather',
    ]);
  });

  it('handles empty and symbol-only text', () => {
    expect(tokenize('')).toEqual([]);
    expect(tokenize('!!! ... ###')).toEqual([]);
  });
});

describe('one word splitter for the index and the embedded text', () => {
  it('splits names the same way for both, Unicode included', () => {
    expect(splitWords('getHTTPResponse_v2')).toEqual(['get', 'http', 'response', 'v2']);
    expect(splitWords('créerFacture.PDF')).toEqual(['créer', 'facture', 'pdf']);
    expect(toolEmbeddingText({ name: 'JNIBridge.setLauncherInfo' })).toBe(
      'jni bridge set launcher info (JNIBridge.setLauncherInfo)',
    );
  });

  it('gives the same tokens on the dev sets as before the splitter was shared', async () => {
    const { readFileSync } = await import('node:fs');
    const { createHash } = await import('node:crypto');
    const hash = createHash('sha256');
    let count = 0;
    for (const set of ['dev', 'dev-multi']) {
      const dir = `${import.meta.dirname}/../../fixtures/eval/${set}`;
      for (const line of readFileSync(`${dir}/tools.jsonl`, 'utf8').split('\n')) {
        if (!line.trim()) continue;
        const { usage: _learned, ...fields } = toolFields(JSON.parse(line));
        for (const text of Object.values(fields)) {
          const tokens = tokenize(text);
          count += tokens.length;
          hash.update(`${tokens.join(' ')}\n`);
        }
      }
      for (const line of readFileSync(`${dir}/queries.jsonl`, 'utf8').split('\n')) {
        if (!line.trim()) continue;
        const tokens = tokenize(JSON.parse(line).query);
        count += tokens.length;
        hash.update(`${tokens.join(' ')}\n`);
      }
    }
    // Pinned from the tokenizer before issue 14 merged the two splitters.
    expect({ count, hash: hash.digest('hex').slice(0, 16) }).toEqual({
      count: 145357,
      hash: '8268c5062a3ffd48',
    });
  });
});
