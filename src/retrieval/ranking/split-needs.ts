import { tokenize } from '../lexical/tokenize.ts';

// Sentence ends and the connectives people use to chain requests. A bare "and"
// is included: "find the trend and chart it" is the common case, and a clause
// without content words is dropped below anyway.
const CONNECTIVES = 'and also|and then|as well as|after that|afterwards|also|then|plus|and';
const SEPARATORS = new RegExp(`[.?!;]+(?:\\s+|$)|\\s*,?\\s+\\b(?:${CONNECTIVES})\\b\\s+`, 'i');
// "Also, ..." opening a sentence
const LEADING = new RegExp(`^[\\s,:-]*(?:(?:${CONNECTIVES})\\b[\\s,:-]*)*`, 'i');

/**
 * Splits a request into the needs it names ("find the trend, chart it and save
 * a PDF" -> three needs). Fragments without content words ("please", "thanks")
 * are dropped; a request with one need returns one element.
 *
 * @example
 * ```ts
 * splitNeeds('Play some jazz. Also, will it rain tomorrow?');
 * // ['Play some jazz', 'will it rain tomorrow']
 * ```
 */
export function splitNeeds(request: string): string[] {
  return request
    .split(SEPARATORS)
    .map(part => part.replace(LEADING, '').replace(/[\s,:-]+$/, ''))
    .filter(part => tokenize(part).length > 0);
}
