// A JSON value from code the app does not control, made safe to encode again: JSON.parse reads any
// depth, but JSON.stringify recurses, and a few thousand levels (a sandboxed cell's `_repr_json_`,
// an MCP server's structured result) overflow the stack of whatever encodes it next (the chat's
// stream, a provider request). Cut as text results are: in place, with a note saying what went.

/** A JSON value, as `boundJson` returns it. */
export type BoundedJsonValue =
  null | boolean | number | string | BoundedJsonValue[] | { [key: string]: BoundedJsonValue };

/** Levels of arrays and objects kept by default; deeper ones become a note. */
export const MAX_JSON_DEPTH = 64;

/** The key of the note that ends an object cut for size. */
const MORE_KEYS = '…';

/**
 * A copy of `value` within `maxDepth` levels and about `maxChars` characters of JSON text, and
 * whether it was cut. What does not fit is replaced by a note, as text is cut: an array or object
 * deeper than `maxDepth` by `"… (cut: nested deeper than 64 levels)"`, a long string by its start
 * and `"… (N more characters cut)"`, the items past the size by a last item `"… (N more items
 * cut)"` (objects: a last key `"…"`). The notes may pass `maxChars` by a few dozen characters per
 * level. `value` is read as JSON.parse gives values (other objects by their own enumerable keys);
 * values JSON has no form for are written as JSON.stringify writes them (non-finite numbers as
 * null, functions and undefined left out of objects and null in arrays). Never recurses deeper
 * than `maxDepth`, so a value of any depth is safe to pass.
 *
 * @example
 * ```ts
 * const { value, cut } = boundJson(JSON.parse(line), { maxChars: 1 << 20 });
 * JSON.stringify(value); // cannot overflow the stack
 * ```
 */
export function boundJson(
  value: unknown,
  {
    maxDepth = MAX_JSON_DEPTH,
    maxChars = Number.POSITIVE_INFINITY,
  }: {
    /** Levels of arrays and objects kept. */
    maxDepth?: number;
    /** Characters of JSON text kept (the notes come on top). */
    maxChars?: number;
  } = {},
): { value: BoundedJsonValue; cut: boolean } {
  const state = { left: maxChars, cut: false };
  const spend = (chars: number) => {
    state.left -= chars;
  };
  const note = (text: string): string => {
    state.cut = true;
    spend(text.length + 2);
    return text;
  };

  const copy = (item: unknown, depth: number): BoundedJsonValue => {
    if (item === null || item === undefined || typeof item === 'function') return scalar(null);
    if (typeof item === 'boolean') return scalar(item);
    if (typeof item === 'number') return scalar(Number.isFinite(item) ? item : null);
    if (typeof item === 'bigint') return text(String(item));
    if (typeof item === 'string') return text(item);
    if (typeof item !== 'object') return scalar(null);
    if (depth >= maxDepth) return note(`… (cut: nested deeper than ${maxDepth} levels)`);
    spend(2);
    if (Array.isArray(item)) {
      const out: BoundedJsonValue[] = [];
      for (let i = 0; i < item.length; i++) {
        if (state.left < (i > 0 ? 1 : 0) + leastChars(item[i])) {
          out.push(note(`… (${item.length - i} more items cut)`));
          break;
        }
        if (i > 0) spend(1);
        out.push(copy(item[i], depth + 1));
      }
      return out;
    }
    const keys = Object.keys(item).filter(key => {
      const member = (item as Record<string, unknown>)[key];
      return member !== undefined && typeof member !== 'function' && typeof member !== 'symbol';
    });
    const entries: [string, BoundedJsonValue][] = [];
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const member = (item as Record<string, unknown>)[key];
      const keyChars = JSON.stringify(key).length + 1 + (i > 0 ? 1 : 0);
      if (state.left < keyChars + leastChars(member)) {
        entries.push([MORE_KEYS, note(`${keys.length - i} more keys cut`)]);
        break;
      }
      spend(keyChars);
      entries.push([key, copy(member, depth + 1)]);
    }
    // fromEntries defines own properties: a "__proto__" key stays a key, not a prototype.
    return Object.fromEntries(entries);
  };

  const scalar = (item: null | boolean | number): null | boolean | number => {
    spend(String(item).length);
    return item;
  };

  const text = (item: string): string => {
    if (state.left === Number.POSITIVE_INFINITY) return item;
    const chars = item.length + 2 > state.left ? Infinity : JSON.stringify(item).length;
    if (chars <= state.left) {
      spend(chars);
      return item;
    }
    // Escapes make the JSON of a prefix longer than the prefix: each character taken off
    // shortens it by at least one, so taking off the excess makes it fit.
    let keep = Math.max(0, Math.min(item.length, state.left - 2));
    for (;;) {
      // Never half a surrogate pair.
      if (/[\uD800-\uDBFF]/.test(item.charAt(keep - 1))) keep -= 1;
      const excess = JSON.stringify(item.slice(0, keep)).length - state.left;
      if (excess <= 0 || keep === 0) break;
      keep = Math.max(0, keep - excess);
    }
    const kept = item.slice(0, keep);
    spend(JSON.stringify(kept).length);
    return kept + note(`… (${item.length - keep} more characters cut)`);
  };

  return { value: copy(value, 0), cut: state.cut };
}

/** The fewest characters `value` can take once cut: a scalar's own, `""`, `[]` or `{}`. */
function leastChars(value: unknown): number {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value).length : 4;
  if (typeof value === 'boolean') return String(value).length;
  if (value === null || value === undefined || typeof value === 'function') return 4;
  return 2;
}
