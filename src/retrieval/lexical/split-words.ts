/**
 * Splits text the way tool names are written: camelCase, PascalCase, snake_case,
 * kebab-case, dotted and slashed paths all become lower-case words
 * ("getHTTPResponse_v2" -> get, http, response, v2). A chunk that splits into
 * parts is also visited whole (`joined`), so "GitHub" can still match "github".
 * The one word splitter of the library: the lexical index and the text a dense
 * model embeds both use it.
 *
 * @example
 * ```ts
 * const words: string[] = [];
 * visitWords('github.createPullRequest', (word, joined) => joined || words.push(word));
 * // words: ['github', 'create', 'pull', 'request']
 * ```
 */
export function visitWords(text: string, visit: (word: string, joined: boolean) => void): void {
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
    for (const part of parts) visit(part, false);
    if (parts.length > 1) visit(chunk.toLowerCase(), true);
  };
  if (!ASCII.test(text)) {
    for (const chunk of text.normalize('NFKC').split(/[^\p{L}\p{N}]+/u)) {
      if (chunk !== '') splitCase(chunk, false);
    }
    return;
  }
  // Most tool text is ASCII: one scan over char codes finds the same chunks as
  // the Unicode split, and notes the case boundaries splitCase would split at, so
  // the usual chunks ("weather", "Weather", "URL") are only lower-cased.
  let start = -1;
  let upper = false;
  let boundary = false;
  // Kinds of the previous two characters: 0 other, 1 lower-case or digit, 2 upper-case.
  let previous = 0;
  let beforePrevious = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 0;
    const kind = c >= 65 && c <= 90 ? 2 : (c >= 97 && c <= 122) || (c >= 48 && c <= 57) ? 1 : 0;
    if (kind !== 0) {
      if (start < 0) start = i;
      upper ||= kind === 2;
      // aB, 1B (lowerUpper) and ABc (ACRONYMWord): where splitCase's patterns match.
      const isLower = c >= 97 && c <= 122;
      boundary ||=
        (kind === 2 && previous === 1) || (isLower && previous === 2 && beforePrevious === 2);
    } else if (start >= 0) {
      const chunk = text.slice(start, i);
      if (boundary) splitCase(chunk, true);
      else visit(upper ? chunk.toLowerCase() : chunk, false);
      start = -1;
      upper = false;
      boundary = false;
    }
    beforePrevious = kind === 0 ? 0 : previous;
    previous = kind;
  }
}

/**
 * The words of `text` in order, without the joined forms: what a dense model
 * reads for a tool name ("getWeather" -> "get weather").
 *
 * @example
 * ```ts
 * splitWords('getHTTPResponse_v2'); // ['get', 'http', 'response', 'v2']
 * ```
 */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  visitWords(text, (word, joined) => {
    if (!joined && word !== '') words.push(word);
  });
  return words;
}

// Every UTF-16 code unit below 0x80.
const ASCII = /^[\u0000-\u007f]*$/;
