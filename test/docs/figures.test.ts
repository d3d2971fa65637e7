import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RENDERERS } from '../../scripts/figures/renderers.ts';
import { Results, loadResults } from '../../scripts/figures/results.ts';
import { type Renderers, renderDoc, renderDocs } from '../../scripts/figures/update-docs.ts';

// Every figure the docs quote comes from a results file a bench wrote (bench/results/*.json):
// `npm run bench:*` rewrites the files and the docs; this checks the committed docs match the
// committed files, so a figure edited by hand, or a bench re-run without updating the docs, fails.
const root = join(import.meta.dirname, '..', '..');

describe('README and docs figures', () => {
  it('match bench/results', async () => {
    const docs = await renderDocs({
      root,
      results: loadResults(join(root, 'bench', 'results')),
      renderers: RENDERERS,
      check: true,
    });
    expect(docs.flatMap(doc => doc.problems)).toEqual([]);
    // Every block and value is used somewhere, so none is rendered for nothing.
    const text = docs.map(doc => doc.text).join('\n');
    const unused = [
      ...Object.keys(RENDERERS.blocks).filter(name => !text.includes(`<!-- figures:${name} -->`)),
      ...Object.keys(RENDERERS.values).filter(name => !text.includes(`<!-- figure:${name} -->`)),
    ];
    expect(unused).toEqual([]);
  });

  it('refuse a warm recall table whose bench found warm and cold figures different', () => {
    const loaded = loadResults(join(root, 'bench', 'results'));
    const render = RENDERERS.blocks['warm-recall-table']!;
    expect(() => render(loaded)).not.toThrow();
    const quality = loaded.file('quality');
    const broken = new Results([
      {
        ...quality,
        rows: quality.rows.map(row =>
          row.set === 'dev-multi' && 'check' in row ? { ...row, ok: false } : row,
        ),
      },
    ]);
    expect(() => render(broken)).toThrow(/dev-multi: warm \(snapshot\) figures equal cold/);
  });

  it('each results file names its machine and command', () => {
    const results = loadResults(join(root, 'bench', 'results'));
    for (const name of results.names()) {
      const { machine, command, rows } = results.file(name);
      expect(command, name).toMatch(/^npm run bench:/);
      expect(machine.cores, name).toBeGreaterThan(0);
      expect(machine.date, name).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      expect(typeof machine.loadAverage.max, name).toBe('number');
      expect(rows.length, name).toBeGreaterThan(0);
    }
  });
});

describe('the figures check itself', () => {
  const results = new Results([
    {
      name: 'demo',
      command: 'npm run bench:demo',
      args: [],
      machine: {
        date: '2026-01-01T00:00:00.000Z',
        cores: 2,
        cpu: 'test',
        memoryGiB: 1,
        node: 'v24.0.0',
        v8: '13',
        commit: 'abc',
        loadAverage: { start: 0.1, end: 0.1, max: 0.2 },
      },
      rows: [{ case: 'one', p50Ms: 12 }],
    },
  ]);
  const renderers: Renderers = {
    blocks: { 'demo-table': r => `| p50 |\n| --- |\n| ${r.number('demo', {}, 'p50Ms')} ms |` },
    values: { 'demo-p50': r => `${r.number('demo', {}, 'p50Ms')} ms` },
  };
  const render = (text: string) => renderDoc({ file: 'demo.md', text, results, renderers, root });

  it('rewrites a stale block and a stale value from the results', async () => {
    const doc = await render(
      'Median <!-- figure:demo-p50 -->99 ms<!-- /figure -->.\n\n<!-- figures:demo-table -->\n| p50 |\n| --- |\n| 99 ms |\n<!-- /figures -->\n',
    );
    expect(doc.problems).toEqual([]);
    expect(doc.text).toContain('<!-- figure:demo-p50 -->12 ms<!-- /figure -->');
    expect(doc.text).toContain('| 12 ms |');
    expect(doc.text).not.toContain('99 ms');
  });

  it('reports unknown names, missing rows and unclosed blocks', async () => {
    const unknown = await render('<!-- figure:nope -->1 ms<!-- /figure -->\n');
    expect(unknown.problems).toEqual(['demo.md:1: no value named nope']);
    const missing = await render('<!-- figures:demo-table -->\n');
    expect(missing.problems).toEqual(['demo.md:1: block demo-table has no <!-- /figures --> line']);
    const broken = await renderDoc({
      file: 'demo.md',
      text: '<!-- figure:demo-p50 -->1 ms<!-- /figure -->\n',
      results: new Results([]),
      renderers,
      root,
    });
    expect(broken.problems[0]).toMatch(
      /^demo\.md:1: demo-p50: bench\/results\/demo\.json is missing/,
    );
  });

  it('flags a measurement written by hand in a paragraph about a bench', async () => {
    const doc = await render(
      'Measured with `npm run bench:demo`: <!-- figure:demo-p50 -->12 ms<!-- /figure --> median,\nand 3.4 ms at p90 (1.5x).\n\nDefaults: 50 ms, unrelated to any bench.\n',
    );
    expect(doc.problems).toEqual([
      'demo.md:2: "3.4 ms" is not from a results file',
      'demo.md:2: "1.5x" is not from a results file',
    ]);
  });
});
