import { stemmer } from 'stemmer';
import { STOP_WORDS } from './stop-words.ts';

/** Options of {@link tokenize}. */
export type TokenizeOptions = {
  /** Drop English stop words and request fillers. */
  dropStopWords?: boolean;
  /** Reduce words to their Porter stem ("forecasts" -> "forecast"). */
  stem?: boolean;
};

const stemCache = new Map<string, string>();
const STEM_CACHE_LIMIT = 50_000;

function stem(word: string): string {
  let stemmed = stemCache.get(word);
  if (stemmed === undefined) {
    stemmed = stemmer(word);
    if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear();
    stemCache.set(word, stemmed);
  }
  return stemmed;
}

/**
 * Splits text the way tool names are written: camelCase, PascalCase, snake_case,
 * kebab-case, dotted and slashed paths all become words ("getHTTPResponse_v2" ->
 * get http response v2). Pure numbers and single letters are dropped: in
 * requests they are values ("user 12345"), not needs.
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
  const tokens: string[] = [];
  const defaults = dropStopWords && useStem;
  const push = (word: string): void => {
    // Catalogs repeat their words: the default pipeline's answer per word is remembered.
    let token = defaults ? tokenCache.get(word) : undefined;
    if (token === undefined) {
      token =
        word.length < 2 || NUMBER.test(word) || (dropStopWords && STOP_WORDS.has(word))
          ? null
          : useStem
            ? stem(word)
            : word;
      if (defaults) {
        if (tokenCache.size >= STEM_CACHE_LIMIT) tokenCache.clear();
        tokenCache.set(word, token);
      }
    }
    if (token !== null) tokens.push(token);
  };
  const splitCase = (chunk: string, ascii: boolean): void => {
    const parts = (
      ascii
        ? chunk.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z])([A-Z][a-z])/g, '$1 $2')
        : // lowerUpper and letter/digit boundaries, then ACRONYMWord boundaries
          chunk
            .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
            .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    )
      .toLowerCase()
      .split(' ');
    for (const part of parts) push(part);
    // "GitHub" must still match "github": keep the joined word beside its parts.
    if (parts.length > 1) push(chunk.toLowerCase());
  };
  if (!ASCII.test(text)) {
    for (const chunk of text.normalize('NFKC').split(/[^\p{L}\p{N}]+/u)) splitCase(chunk, false);
    return tokens;
  }
  // Most tool text is ASCII: one scan over char codes finds the same chunks as
  // the Unicode split, and chunks without capitals need no case splitting.
  let start = -1;
  let upper = false;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 0;
    const isUpper = c >= 65 && c <= 90;
    if (isUpper || (c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
      if (start < 0) start = i;
      upper ||= isUpper;
    } else if (start >= 0) {
      const chunk = text.slice(start, i);
      if (upper) splitCase(chunk, true);
      else push(chunk);
      start = -1;
      upper = false;
    }
  }
  return tokens;
}

// Every UTF-16 code unit below 0x80.
const ASCII = /^[\u0000-\u007f]*$/;
const NUMBER = /^\p{N}+$/u;
const tokenCache = new Map<string, string | null>();
