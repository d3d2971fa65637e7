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
  const push = (word: string): void => {
    if (word.length < 2 || /^\p{N}+$/u.test(word)) return;
    if (dropStopWords && STOP_WORDS.has(word)) return;
    tokens.push(useStem ? stem(word) : word);
  };
  for (const chunk of text.normalize('NFKC').split(/[^\p{L}\p{N}]+/u)) {
    const parts = chunk
      // lowerUpper and letter/digit boundaries, then ACRONYMWord boundaries
      .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
      .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
      .toLowerCase()
      .split(' ');
    for (const part of parts) push(part);
    // "GitHub" must still match "github": keep the joined word beside its parts.
    if (parts.length > 1) push(chunk.toLowerCase());
  }
  return tokens;
}
