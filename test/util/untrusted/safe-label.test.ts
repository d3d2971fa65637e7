import { describe, expect, it } from 'vitest';
import { safeLabel } from '../../../src/util/untrusted/safe-label.ts';

describe('safeLabel', () => {
  it('takes out the bidirectional controls that make a name read as another', () => {
    // Shown as "photo…exe.jpg" with the override in.
    expect(safeLabel('photo\u202Egpj.exe')).toBe('photogpj.exe');
    const bidi = [
      ...['\u200E', '\u200F', '\u061C'], // marks
      ...['\u202A', '\u202B', '\u202C', '\u202D', '\u202E'], // embeddings, overrides, pop
      ...['\u2066', '\u2067', '\u2068', '\u2069'], // isolates
    ];
    for (const control of bidi) expect(safeLabel(`a${control}b`), escape(control)).toBe('ab');
  });

  it('takes out every control character (C0, DEL, C1) and turns line breaks into one space', () => {
    expect(safeLabel('a\u0000b\u0007c\u001Bd\u007Fe\u0080f\u009Fg')).toBe('abcdefg');
    expect(safeLabel('\u001B[31mred\u001B[0m')).toBe('[31mred[0m');
    expect(safeLabel('Sales\nby month')).toBe('Sales by month');
    expect(safeLabel('a\r\n\tb\u2028c\u2029d\u0085e')).toBe('a b c d e');
  });

  it('takes out invisible formatting (zero-width space, word joiner, BOM, soft hyphen, tags)', () => {
    expect(safeLabel('pa\u200By\u2060pal\uFEFF.com\u00AD')).toBe('paypal.com');
    // Tag characters spell hidden ASCII a reader never sees but a model reads.
    const hidden = [...'ignore'].map(c => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('');
    expect(safeLabel(`report${hidden}.csv`)).toBe('report.csv');
  });

  it('keeps ZWJ and ZWNJ (emoji sequences, Persian and Indic spelling), and right-to-left text', () => {
    const family = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}';
    expect(safeLabel(family)).toBe(family);
    expect(safeLabel('می\u200Cخواهم')).toBe('می\u200Cخواهم');
    expect(safeLabel('تقرير.csv')).toBe('تقرير.csv');
    expect(safeLabel('résumé 2024 — final.pdf')).toBe('résumé 2024 — final.pdf');
  });

  it('makes a lone surrogate U+FFFD and keeps surrogate pairs', () => {
    expect(safeLabel('a\uD800b\uDC00c')).toBe('a\uFFFDb\uFFFDc');
    expect(safeLabel('chart \u{1F4C8}')).toBe('chart \u{1F4C8}');
  });
});
