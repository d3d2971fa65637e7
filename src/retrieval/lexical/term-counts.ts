import { FIELD_NAMES } from '../tool-fields.ts';

/** Fields per term in {@link TermCounts.tf} (`FIELD_NAMES` order). */
export const FIELD_COUNT = FIELD_NAMES.length;
/** The learned usage field: the index fills it, a tool's own text never does. */
export const USAGE_FIELD = FIELD_NAMES.indexOf('usage');

/**
 * A tool as the lexical index holds it: its distinct terms, per term its count in each field
 * (`FIELD_COUNT` per term, in `FIELD_NAMES` order), and each field's length in tokens. What a
 * catalog's analysis snapshot keeps, so a warm start does not tokenise the catalog again.
 */
export type TermCounts = {
  readonly terms: readonly string[];
  readonly tf: Float32Array;
  readonly lengths: Float32Array;
};

/**
 * The term counts of a tool's tokens per field (`LexicalIndex.analyze`), terms in the order they
 * first occur.
 *
 * @example
 * ```ts
 * termCountsOf({ tokens: [['weather'], [], ['weather', 'citi'], [], [], []] }).terms; // ['weather', 'citi']
 * ```
 */
export function termCountsOf({ tokens }: { tokens: readonly (readonly string[])[] }): TermCounts {
  const at = new Map<string, number>();
  const terms: string[] = [];
  for (const field of tokens) {
    for (const token of field) {
      if (at.has(token)) continue;
      at.set(token, terms.length);
      terms.push(token);
    }
  }
  const tf = new Float32Array(terms.length * FIELD_COUNT);
  const lengths = new Float32Array(FIELD_COUNT);
  tokens.forEach((field, f) => {
    lengths[f] = field.length;
    for (const token of field) tf[(at.get(token) as number) * FIELD_COUNT + f]! += 1;
  });
  return { terms, tf, lengths };
}

/**
 * Whether `indexed` holds exactly the tool text of `fresh` (from `termCountsOf`): the same terms
 * with the same counts and field lengths. Learned usage in `indexed` is left out of the
 * comparison, as `fresh` never has any.
 *
 * @example
 * ```ts
 * sameToolText(index.termCounts(slot)!, termCountsOf(index.analyze(toolFields(tool))));
 * ```
 */
export function sameToolText(indexed: TermCounts, fresh: TermCounts): boolean {
  for (let f = 0; f < FIELD_COUNT; f++) {
    if (f !== USAGE_FIELD && indexed.lengths[f] !== fresh.lengths[f]) return false;
  }
  const freshAt = new Map(fresh.terms.map((term, i) => [term, i]));
  let own = 0;
  for (let i = 0; i < indexed.terms.length; i++) {
    let counted = false;
    for (let f = 0; f < FIELD_COUNT; f++)
      counted ||= f !== USAGE_FIELD && indexed.tf[i * FIELD_COUNT + f] !== 0;
    if (!counted) continue; // a term only learned usage has
    own++;
    const j = freshAt.get(indexed.terms[i] as string);
    if (j === undefined) return false;
    for (let f = 0; f < FIELD_COUNT; f++) {
      if (f !== USAGE_FIELD && indexed.tf[i * FIELD_COUNT + f] !== fresh.tf[j * FIELD_COUNT + f])
        return false;
    }
  }
  return own === fresh.terms.length;
}
