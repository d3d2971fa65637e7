// untrusted/: values from code the app does not control (the sandbox, an MCP server), made safe to
// show and to encode again: names without invisible characters, JSON within bounds.
//
// Names that reach a page from code the app does not control (a file the sandbox wrote, a chart's
// title, an MCP server's tool name) are shown as labels and saved as file names: they must read as
// what they are. The characters taken out are Unicode's own "invisible" categories:
// - every control (\p{Cc}: C0, DEL, C1): terminal escapes, NUL, line breaks inside a name;
// - every format character (\p{Cf}): the bidirectional embeddings, overrides, isolates and marks
//   (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C) that make `photo\u202Egpj.exe` read as
//   "photo…exe.jpg", and the zero-width space, word joiner, BOM, soft hyphen, invisible operators and
//   the tag characters (U+E0000 block) that hide text from a reader but not from a model;
// except ZWNJ and ZWJ (U+200C, U+200D): Persian and Indic spelling and emoji sequences need them,
// and they neither reorder nor hide other characters. Whitespace controls and the line and
// paragraph separators become a space (a title over two lines stays two words), and a lone
// surrogate (not text at all) becomes U+FFFD.

const BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]+/g;
const INVISIBLE = /(?![\u200C\u200D])[\p{Cc}\p{Cf}]/gu;
const LONE_SURROGATE = /\p{Cs}/gu;

/**
 * `text` without control and invisible formatting characters (bidirectional overrides, isolates
 * and marks, zero-width spaces, tag characters; ZWJ and ZWNJ stay), line breaks as one space, lone
 * surrogates as U+FFFD: safe to show as a label or to offer as a download's name.
 *
 * @example
 * ```ts
 * safeLabel('photo\u202Egpj.exe'); // 'photogpj.exe', not "photo…exe.jpg"
 * safeLabel('Sales\nby month'); // 'Sales by month'
 * ```
 */
export function safeLabel(text: string): string {
  return text.replace(BREAKS, ' ').replace(INVISIBLE, '').replace(LONE_SURROGATE, '\uFFFD');
}
