import type { Ranking } from './fusion.ts';
import type { LexicalIndex } from '../lexical/lexical-index.ts';
import { splitNeeds } from './split-needs.ts';
import { tokenize } from '../lexical/tokenize.ts';

// A need must carry this share of the request's information to get a seat.
const NEED_SHARE = 0.2;
// More needs than this is prose (a pasted prompt), not a list of needs.
const MAX_NEEDS = 4;

/**
 * The needs of a multi-need request that deserve their own seat: fragments
 * carrying at least a fifth of the request's information (IDF mass in the
 * lexical index, else word count), so context like "my user ID is 12345"
 * does not take a seat. More than four such fragments means prose, and the
 * request is searched as a whole ([] is returned).
 */
export function distinctNeeds(query: string, lexical: LexicalIndex | undefined): string[] {
  const parts = splitNeeds(query);
  if (parts.length < 2) return [];
  const mass = (text: string): number =>
    lexical
      ? [...lexical.queryTerms(text).values()].reduce((sum, idf) => sum + idf, 0)
      : tokenize(text).length;
  const total = mass(query);
  const needs = parts.filter(part => mass(part) >= NEED_SHARE * total);
  return needs.length >= 2 && needs.length <= MAX_NEEDS ? needs : [];
}

/**
 * Merges the whole request's ranking with one ranking per need: the request's
 * best tool first, then each need's best tool, then the rest of
 * the request's ranking. Every need gets a seat without letting a vague
 * fragment outrank the request's clear favourite.
 */
export function mergeNeeds(
  rankings: readonly Ranking[],
  k: number,
): { slot: number; score: number }[] {
  const [whole = [], ...needs] = rankings;
  const out: { slot: number; score: number }[] = [];
  const taken = new Set<number>();
  const take = (hit: { slot: number; score: number } | undefined): void => {
    if (hit === undefined || taken.has(hit.slot) || out.length >= k) return;
    taken.add(hit.slot);
    out.push(hit);
  };
  take(whole[0]);
  // A need whose best tool already has a seat is served; it takes no second one.
  for (const ranking of needs) take(ranking[0]);
  for (const hit of whole) take(hit);
  return out;
}
