import { describe, expect, it } from 'vitest';
import { boundJson } from '../../../src/util/untrusted/bound-json.ts';
import { DEPTH_NOTE, listDepth, nestedLists } from '../../helpers/nested-json.ts';

describe('boundJson', () => {
  it('passes a value within the bounds through unchanged', () => {
    const value = { a: [1, 'two', null, true, { b: -0.5 }], c: '', '': {} };
    const bounded = boundJson(value, { maxChars: 1000 });
    expect(bounded).toEqual({ value, cut: false });
    expect(JSON.stringify(bounded.value)).toBe(JSON.stringify(value));
    expect(boundJson(nestedLists(64))).toEqual({ value: nestedLists(64), cut: false });
  });

  it('replaces what is nested deeper than maxDepth by a note; any depth is safe to encode after', () => {
    // Deeper than JSON.stringify can encode on a default stack.
    const deep = nestedLists(100_000);
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    const { value, cut } = boundJson(deep);
    expect(cut).toBe(true);
    expect(listDepth(value)).toEqual([64, DEPTH_NOTE]);
    expect(() => JSON.stringify(value)).not.toThrow();
    let objects: unknown = 1;
    for (let i = 0; i < 10; i++) objects = { child: objects };
    const shallow = boundJson(objects, { maxDepth: 3 }).value;
    expect(shallow).toEqual({
      child: { child: { child: '… (cut: nested deeper than 3 levels)' } },
    });
  });

  it('cuts a value past maxChars with notes: items, keys and a long string', () => {
    const items = boundJson(
      Array.from({ length: 1000 }, (_, i) => i),
      { maxChars: 100 },
    );
    expect(items.cut).toBe(true);
    const list = items.value as unknown[];
    expect(list.at(-1)).toMatch(/^… \(\d+ more items cut\)$/);
    const kept = list.length - 1;
    expect(list.slice(0, kept)).toEqual(Array.from({ length: kept }, (_, i) => i));
    expect(Number(/\d+/.exec(String(list.at(-1)))![0])).toBe(1000 - kept);
    expect(JSON.stringify(list.slice(0, kept)).length).toBeLessThanOrEqual(100);

    const keys = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`key${i}`, i]));
    const object = boundJson(keys, { maxChars: 60 }).value as Record<string, unknown>;
    expect(object['…']).toMatch(/^\d+ more keys cut$/);
    expect(Object.keys(object).length).toBeLessThan(10);

    const long = boundJson({ text: 'x'.repeat(10_000) }, { maxChars: 50 }).value as {
      text: string;
    };
    expect(long.text).toMatch(/^x+… \(\d+ more characters cut\)$/);
    expect(JSON.stringify(long).length).toBeLessThan(50 + 40);
  });

  it('counts escaped characters as JSON text, and never cuts a surrogate pair in half', () => {
    const quotes = boundJson('"'.repeat(100), { maxChars: 20 }).value as string;
    expect(JSON.stringify(quotes.split('…')[0]).length).toBeLessThanOrEqual(20);
    const emoji = boundJson('\u{1F4C8}'.repeat(20), { maxChars: 7 }).value as string;
    expect(emoji.split('…')[0]).toBe('\u{1F4C8}\u{1F4C8}');
  });

  it('writes what JSON has no form for as JSON.stringify does; "__proto__" stays a key', () => {
    const odd = JSON.parse('{"__proto__": {"polluted": true}, "n": 1}') as object;
    const { value } = boundJson({
      odd,
      nan: Number.NaN,
      big: 10n,
      list: [undefined, () => 1, Infinity],
      gone: undefined,
    });
    expect(JSON.stringify(value)).toBe(
      '{"odd":{"__proto__":{"polluted":true},"n":1},"nan":null,"big":"10","list":[null,null,null]}',
    );
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
    expect(Object.getPrototypeOf((value as { odd: object }).odd)).toBe(Object.prototype);
  });
});
