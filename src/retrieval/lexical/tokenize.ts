import { LRUCache } from 'lru-cache';
import { stemmer } from 'stemmer';
import { visitWords } from './split-words.ts';
import { STOP_WORDS } from './stop-words.ts';

/** Options of {@link tokenize}. */
export type TokenizeOptions = {
  /** Drop English stop words and request fillers. */
  dropStopWords?: boolean;
  /** Reduce words to their Porter stem ("forecasts" -> "forecast"). */
  stem?: boolean;
};

// Catalogs repeat their words: the answer per word is remembered. A word that is
// dropped maps to '' (lru-cache stores no undefined).
const CACHE_LIMIT = 50_000;
const stems = new LRUCache<string, string>({ max: CACHE_LIMIT });
const tokens = new LRUCache<string, string>({ max: CACHE_LIMIT });

function stem(word: string): string {
  let stemmed = stems.get(word);
  if (stemmed === undefined) {
    stemmed = stemmer(word);
    stems.set(word, stemmed);
  }
  return stemmed;
}

/**
 * Splits text into index terms: words as {@link visitWords} finds them, stop
 * words dropped and Porter-stemmed by default. Pure numbers and single letters
 * are dropped: in requests they are values ("user 12345"), not needs.
 *
 * @example
 * ```ts
 * tokenize('github.createPullRequest') // ['github', 'creat', 'pull', 'request']
 * ```
 */
export function tokenize(
  text: string,
  { dropStopWords = true, stem: useStem = true }: TokenizeOptions = {},
): string[] {
  const out: string[] = [];
  const defaults = dropStopWords && useStem;
  visitWords(text, word => {
    let token = defaults ? tokens.get(word) : undefined;
    if (token === undefined) {
      token =
        word.length < 2 || NUMBER.test(word) || (dropStopWords && STOP_WORDS.has(word))
          ? ''
          : useStem
            ? stem(word)
            : word;
      if (defaults) tokens.set(word, token);
    }
    if (token !== '') out.push(token);
  });
  return out;
}

const NUMBER = /^\p{N}+$/u;
