// The host's count of what a cell returns: shown values and chart data are checked again and
// counted against the caps (the kernel runs the model's code, so its records can be forged).
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { CellCollector } from '../../../src/sandbox/conversation/cell-collector.ts';
import { resolveRecordCaps } from '../../../src/sandbox/output/record-budget.ts';

const png = PNG.sync.write(new PNG({ width: 2, height: 3 }));
const request = (caps: Partial<Parameters<typeof resolveRecordCaps>[0]> = {}) => ({
  code: '',
  files: [],
  caps: resolveRecordCaps({ images: 2, files: 2, bytes: 100_000, results: 3, ...caps }),
  timeoutMs: 1_000,
  maxOutputBytes: 50,
  replay: false,
});
const rec = (text: string, body?: Buffer) =>
  ({
    type: 'rec',
    data: body ? Buffer.concat([Buffer.from(`${text}\n`), body]) : Buffer.from(`${text}\n`),
  }) as const;
const result = (value: unknown) => rec(`result ${JSON.stringify(value)}`);

describe('CellCollector: shown values and chart data', () => {
  it('keeps checked results in order, cuts text to maxOutputBytes and drops what does not decode', () => {
    const collector = new CellCollector({ request: request(), onOutput: undefined });
    expect(collector.take(result({ main: false, data: { 'text/plain': "'a'" } }))).toBe(true);
    const long = 'x'.repeat(200);
    const forged = {
      main: true,
      data: {
        'text/plain': long,
        'text/html': '<b>ok</b>',
        'image/png': 'bm90IGEgcG5n', // "not a png"
        'text/x-unknown': 'dropped',
      },
    };
    expect(collector.take(result(forged))).toBe(true);
    const [first, second] = collector.result().results;
    expect(first).toEqual({ main: false, data: { 'text/plain': "'a'" } });
    expect(second!.data['text/plain']).toContain('… (150 more characters cut)');
    expect(second!.data).toMatchObject({ 'text/html': '<b>ok</b>' });
    expect(second!.data).not.toHaveProperty('image/png');
    expect(second!.data).not.toHaveProperty('text/x-unknown');
  });

  it('stops the cell past maxResults, and on malformed results past the record cap', () => {
    const collector = new CellCollector({ request: request(), onOutput: undefined });
    const value = { main: false, data: { 'text/plain': '1' } };
    for (let i = 0; i < 3; i++) expect(collector.take(result(value))).toBe(true);
    expect(collector.take(result(value))).toBe(false);
    expect(collector.notes.at(-1)).toContain('shown values (maxResults)');
    const flood = new CellCollector({ request: request(), onOutput: undefined });
    let taken = 0;
    while (flood.take(rec('result {not json')) && taken < 1_000) taken++;
    expect(taken).toBeLessThan(100);
  });

  it('attaches chart data to the image it names, once; a chart for no image is malformed', () => {
    const collector = new CellCollector({ request: request(), onOutput: undefined });
    const meta = { kind: 'image', path: 'figure-1.png', mediaType: 'image/png', bytes: png.length };
    expect(collector.take(rec(`file ${JSON.stringify(meta)}`, png))).toBe(true);
    const chart = { type: 'line', title: 'T', elements: [{ label: 's', points: [[1, 2]] }] };
    expect(collector.take(rec(`chart ${JSON.stringify({ path: 'figure-1.png', chart })}`))).toBe(
      true,
    );
    expect(collector.take(rec(`chart ${JSON.stringify({ path: 'figure-9.png', chart })}`))).toBe(
      true,
    );
    const { images } = collector.result();
    expect(images[0]!.chart).toMatchObject({ type: 'line', title: 'T' });
  });

  it('counts result bytes with images and files', () => {
    const collector = new CellCollector({
      request: request({ bytes: 300, results: 50 }),
      onOutput: undefined,
    });
    const value = { main: false, data: { 'text/plain': 'y'.repeat(40) } };
    const size = result(value).data.length;
    let taken = 0;
    while (collector.take(result(value))) taken++;
    expect(taken).toBe(Math.floor(300 / size));
    expect(collector.notes.at(-1)).toContain('bytes of images and files');
  });
});
