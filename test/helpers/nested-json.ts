// Values nested like the ones built to overflow JSON.stringify (issue 45), and how deep one is.

/**
 * `"bottom"` inside `depth` lists.
 *
 * @example
 * nestedLists(2); // [['bottom']]
 */
export function nestedLists(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/**
 * How many lists deep `value` goes by its first items, and what it finds at the bottom.
 *
 * @example
 * listDepth([['bottom']]); // [2, 'bottom']
 */
export function listDepth(value: unknown): [number, unknown] {
  let depth = 0;
  while (Array.isArray(value)) {
    value = value[0];
    depth += 1;
  }
  return [depth, value];
}

/** What a bounded value holds where its 65th level would start. */
export const DEPTH_NOTE = '… (cut: nested deeper than 64 levels)';
