// What the python tool makes of a cell's shown values: images join the figures (with their
// chart data), the rest keeps its representations, and the model reads `Out:` / `Displayed:`.
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { withinCaps } from '../../src/python/python-artifacts.ts';
import { pythonModelOutput } from '../../src/python/python-model-output.ts';
import { describeResults, toPythonResults } from '../../src/python/python-results.ts';
import { pythonToolDescription } from '../../src/python/python-tool-description.ts';
import { DEPTH_NOTE, listDepth, nestedLists } from '../helpers/nested-json.ts';

const png = PNG.sync.write(new PNG({ width: 4, height: 5 })).toString('base64');
const chart = {
  type: 'line' as const,
  title: 'Sales',
  xLabel: 'month',
  yLabel: 'units',
  xScale: 'linear' as const,
  yScale: 'linear' as const,
  elements: [
    {
      label: 'north',
      points: [
        [1, 3],
        [2, 9],
      ] as Array<[number, number]>,
    },
  ],
  truncated: false,
};

describe('python results', () => {
  it('moves a shown figure to the images with its chart, and keeps the rest', () => {
    const { results, images } = toPythonResults({
      results: [
        { main: false, data: { 'text/plain': '<Figure size 640x480>', 'image/png': png }, chart },
        { main: true, data: { 'text/plain': '   v\n0  1', 'text/html': '<table></table>' } },
      ],
    });
    expect(images).toHaveLength(1);
    expect(images[0]).toMatchObject({ name: 'output-1.png', width: 4, height: 5, chart });
    expect(results).toEqual([
      { main: false, text: '<Figure size 640x480>', image: 'output-1.png' },
      { main: true, text: '   v\n0  1', html: '<table></table>' },
    ]);
    expect(describeResults({ results, maxChars: 1_000 })).toBe(
      'Displayed: output-1.png\nOut:\n   v\n0  1',
    );
  });

  it('bounds shown JSON whatever sandbox made it: 64 levels, then a note', () => {
    const deep = nestedLists(4_500);
    const { results } = toPythonResults({
      results: [{ main: true, data: { 'text/plain': 'Deep()', 'application/json': deep } }],
    });
    expect(listDepth(results[0]!.json)).toEqual([64, DEPTH_NOTE]);
  });

  it('takes control and invisible formatting characters out of names and notes, whatever sandbox made them', () => {
    const data = new Uint8Array(1);
    const run = withinCaps({
      images: [{ name: 'fig\u202E.png', mediaType: 'image/png', width: 1, height: 1, data }],
      files: [{ path: 'outputs/photo\u202Egpj.exe', mediaType: 'application/octet-stream', data }],
      notes: ['outputs/a\u2066b.csv was dropped\u0007'],
    });
    expect(run.images.map(image => image.name)).toEqual(['fig.png']);
    expect(run.files.map(file => file.path)).toEqual(['outputs/photogpj.exe']);
    expect(run.notes).toEqual(['outputs/ab.csv was dropped']);
  });

  it('cuts what the model reads at maxChars in all', () => {
    const results = Array.from({ length: 10 }, () => ({ main: false, text: 'z'.repeat(100) }));
    const text = describeResults({ results, maxChars: 250 });
    expect(text.length).toBeLessThan(320);
    expect(text).toContain('shown values cut at 250 characters');
  });

  it('the model reads stdout, Out:, the artifacts line and a chart summary', () => {
    const output = {
      ...{ state: 'success' as const, attempt: 1, attempts: 1, code: '', truncated: false },
      ...{ stdout: '', files: [], notes: [] },
      images: [
        { name: 'figure-1.png', mediaType: 'image/png', size: 9, width: 4, height: 5, chart },
      ],
      results: [{ main: true, text: '42' }],
    };
    const model = pythonModelOutput({ output, images: false });
    expect(model).toMatchObject({ type: 'text' });
    const text = (model as { value: string }).value;
    expect(text).not.toContain('(no output)');
    expect(text).toContain('Out: 42');
    expect(text).toContain('[Chart figure-1.png: ');
    expect(text).toContain('north');
  });

  it('asks to print only when calls are not notebook cells', () => {
    expect(pythonToolDescription({ stateful: false })).toContain('Print the values you need.');
    const cells = pythonToolDescription({ stateful: true });
    expect(cells).not.toContain('Print');
    expect(cells).toContain('the value of the last expression is shown');
  });
});
