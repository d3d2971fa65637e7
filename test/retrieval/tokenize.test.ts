import { describe, expect, it } from 'vitest';
import { tokenize } from '../../src/retrieval/tokenize.ts';

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
