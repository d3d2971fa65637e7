// What the sandbox hands the host to show is checked there (issue 45): names lose control and
// invisible formatting characters, and shown JSON is bounded in depth and size.
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { toArtifact } from '../../../src/sandbox/output/artifacts.ts';
import { parseChartData } from '../../../src/sandbox/output/chart-data.ts';
import { parseDisplayResult } from '../../../src/sandbox/output/display-result.ts';
import { DEPTH_NOTE, listDepth, nestedLists } from '../../helpers/nested-json.ts';

const png = new Uint8Array(PNG.sync.write(new PNG({ width: 2, height: 2 })));

describe('names from the sandbox', () => {
  it('a returned file or image loses bidirectional and control characters from its name', () => {
    const file = (path: string) =>
      toArtifact({ kind: 'file', path, mediaType: 'image/jpeg', bytes: 2 }, new Uint8Array(2));
    expect(file('outputs/photo\u202Egpj.exe')).toMatchObject({
      file: { path: 'outputs/photogpj.exe' },
    });
    expect(file('outputs/re\u2066port\u2069\u200B.csv\u0000\n')).toMatchObject({
      file: { path: 'outputs/report.csv ' },
    });
    const image = toArtifact(
      { kind: 'image', path: 'fig\u202E.png', mediaType: '', bytes: 0 },
      png,
    );
    expect(image).toMatchObject({ image: { name: 'fig.png' } });
  });

  it('checks the cleaned path: one that names no file, or leaves outputs/, is still dropped', () => {
    const file = (path: string) =>
      toArtifact({ kind: 'file', path, mediaType: 'text/plain', bytes: 0 }, new Uint8Array());
    expect(file('outputs/\u202E\u200F')).toEqual({
      note: 'a returned file with an invalid path was dropped',
    });
    // `..` once the zero-width space is out: normalised, it leaves outputs/.
    expect(file('outputs/.\u200B./secret')).toEqual({
      note: 'secret was dropped: returned files come from /tmp/outputs',
    });
  });

  it("a chart's title, axis labels, series labels and categories lose them too", () => {
    const chart = parseChartData({
      type: 'bar',
      title: 'Sales\u202E by month\n2024',
      xLabel: 'mo\u0007nth',
      yLabel: '\u2067units\u2069',
      elements: [{ label: 'Jan\u200E', group: 'north\u061C', value: 3 }],
    });
    expect(chart).toMatchObject({
      title: 'Sales by month 2024',
      xLabel: 'month',
      yLabel: 'units',
      elements: [{ label: 'Jan', group: 'north', value: 3 }],
    });
    const line = parseChartData({
      type: 'line',
      elements: [{ label: 's\u202D1', points: [['a\u202Eb', 1]] }],
    });
    expect(line).toMatchObject({ elements: [{ label: 's1', points: [['ab', 1]] }] });
  });
});

describe('shown JSON from the sandbox', () => {
  it('is cut at 64 levels with a note, so it encodes again whatever its depth', () => {
    const deep = nestedLists(4_500);
    const result = parseDisplayResult(
      { main: true, data: { 'text/plain': 'Deep()', 'application/json': deep } },
      { maxChars: 1 << 20 },
    );
    expect(listDepth(result?.data['application/json'])).toEqual([64, DEPTH_NOTE]);
    expect(() => JSON.stringify(result)).not.toThrow();
  });

  it('is cut at maxChars with a note, as text/plain is', () => {
    const rows = Array.from({ length: 10_000 }, (_, i) => ({ id: i, name: `row ${i}` }));
    const result = parseDisplayResult(
      {
        main: true,
        data: { 'text/plain': 'x'.repeat(5_000), 'application/json': { rows } },
      },
      { maxChars: 4_096 },
    );
    expect(result?.data['text/plain']).toMatch(/… \(904 more characters cut\)$/);
    const json = result?.data['application/json'] as { rows: unknown[] };
    expect(JSON.stringify(json).length).toBeLessThan(4_096 + 100);
    expect(json.rows.at(-1)).toMatch(/^… \(\d+ more items cut\)$/);
    expect(json.rows[0]).toEqual({ id: 0, name: 'row 0' });
  });
});
