// The host side of "charts as data": parseChartData trusts nothing the sandbox sends (the code
// that drew the chart can forge it), and chartSummary gives a model a short, capped text.
import { describe, expect, it } from 'vitest';
import type { ChartData, SingleChartData } from '../../../src/sandbox/chart-types.ts';
import { parseChartData } from '../../../src/sandbox/output/chart-data.ts';
import { chartSummary } from '../../../src/sandbox/output/chart-summary.ts';

const AXES = {
  title: null,
  xLabel: null,
  yLabel: null,
  xScale: 'linear',
  yScale: 'linear',
  truncated: false,
} as const;

const months = Array.from({ length: 12 }, (_, m) => m);
const SALES: SingleChartData = {
  ...AXES,
  type: 'line',
  title: 'Sales by month',
  xLabel: 'month',
  yLabel: 'sales',
  yScale: 'log',
  elements: [
    { label: 'north', points: months.map(m => [m, 3 + 3 * m + (m === 11 ? 5 : 0)]) },
    { label: 'south', points: months.map(m => [m, 1 + m + (m === 11 ? 5 : 0)]) },
  ],
};
const DATES: SingleChartData = {
  ...AXES,
  type: 'line',
  xScale: 'datetime',
  elements: [
    {
      label: '',
      points: [
        ['2024-01-01T00:00:00+00:00', 1.5],
        ['2024-01-02T12:30:00+00:00', null],
        ['2024-01-03T00:00:00+00:00', 3],
      ],
    },
  ],
};
const SCATTER: SingleChartData = {
  ...AXES,
  type: 'scatter',
  elements: [
    {
      label: 'samples',
      points: [
        [1, 4],
        [2.5, 6],
      ],
    },
  ],
};
const BAR: SingleChartData = {
  ...AXES,
  type: 'bar',
  title: 'Sold',
  xScale: 'categorical',
  elements: [
    { label: 'tea', group: '2024', value: 3 },
    { label: 'cake', group: '2024', value: 5.5 },
    { label: 'tea', group: '2025', value: 4 },
    { label: 'cake', group: '2025', value: null },
  ],
};
const PIE: SingleChartData = {
  ...AXES,
  type: 'pie',
  elements: [
    { label: 'rent', angle: 180, radius: 1 },
    { label: 'food', angle: 120, radius: 1 },
    { label: '', angle: 60, radius: 1 },
  ],
};
const BOX: SingleChartData = {
  ...AXES,
  type: 'box',
  yLabel: 'ms',
  elements: [
    {
      label: 'A',
      min: -1.889,
      firstQuartile: -0.5082,
      median: 0.0307,
      thirdQuartile: 0.488,
      max: 1.294,
      outliers: [-2.7, 2.1],
    },
    { label: 'B', min: 1, firstQuartile: 2, median: 3, thirdQuartile: 4, max: 5, outliers: [] },
  ],
};
const UNKNOWN: SingleChartData = { ...AXES, type: 'unknown', title: 'heatmap', elements: [] };
const COMPOSITE: ChartData = {
  type: 'composite',
  title: 'Two panels',
  charts: [SCATTER, BAR],
  truncated: false,
};

describe('parseChartData', () => {
  it('keeps a valid chart of every type as it is', () => {
    for (const chart of [SALES, DATES, SCATTER, BAR, PIE, BOX, UNKNOWN, COMPOSITE]) {
      // Through JSON, as it arrives from the sandbox.
      expect(parseChartData(JSON.parse(JSON.stringify(chart)))).toEqual(chart);
    }
  });

  it('returns undefined for anything that is not a chart', () => {
    const garbage: unknown[] = [
      undefined,
      null,
      42,
      'line',
      [],
      [SALES],
      {},
      { type: 'radar', elements: [] },
      { type: 'LINE', elements: [] },
      { type: 'composite', charts: [] },
      { type: 'composite', charts: 'all of them' },
      // A composite holds one-axes charts only.
      { type: 'composite', charts: [COMPOSITE] },
      Object.create(null),
    ];
    for (const value of garbage) expect(parseChartData(value)).toBeUndefined();
  });

  it('never throws, not even on proxies and getters that throw', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('boom');
        },
      },
    );
    const getter = {
      ...SCATTER,
      get elements(): unknown {
        throw new Error('boom');
      },
    };
    expect(parseChartData(hostile)).toBeUndefined();
    expect(parseChartData(getter)).toBeUndefined();
    expect(parseChartData({ ...SCATTER, elements: [hostile] })).toBeUndefined();
  });

  it('replaces fields of the wrong type by their empty value and drops malformed elements', () => {
    const forged = {
      type: 'line',
      title: 5,
      xLabel: ['x'],
      yLabel: { text: 'y' },
      xScale: 'javascript:alert(1)',
      yScale: 7,
      truncated: 'yes',
      extra: 'dropped',
      elements: [
        'not a series',
        { label: 3, points: 'none' },
        {
          label: 9,
          points: [
            [1, 2],
            [1],
            [1, 2, 3],
            [1, { x: 1 }],
            [true, 2],
            [Number.NaN, Number.POSITIVE_INFINITY],
            ['b', null],
            { 0: 1, 1: 2 },
          ],
        },
      ],
    };
    expect(parseChartData(forged)).toEqual({
      ...AXES,
      type: 'line',
      elements: [
        {
          label: '',
          points: [
            [1, 2],
            [null, null],
            ['b', null],
          ],
        },
      ],
    });
    expect(parseChartData({ ...BAR, elements: 'bars' })).toEqual({ ...BAR, elements: [] });
    expect(parseChartData({ ...UNKNOWN, elements: [{ any: 'thing' }] })).toEqual(UNKNOWN);
  });

  it('checks bar values, wedge angles and box numbers', () => {
    const bar = parseChartData({
      ...BAR,
      elements: [{ label: 1, group: null, value: '3' }, { value: Number.NaN }, null, 7],
    });
    expect(bar).toMatchObject({
      elements: [
        { label: '', group: '', value: null },
        { label: '', group: '', value: null },
      ],
    });
    const pie = parseChartData({
      ...PIE,
      elements: [
        { label: 'ok', angle: 90, radius: 1 },
        { label: 'negative', angle: -5, radius: 1 },
        { label: 'too wide', angle: 400, radius: 1 },
        { label: 'nan', angle: Number.NaN, radius: 1 },
        { label: 'no radius', angle: 10 },
        { label: 'string', angle: '10', radius: 1 },
      ],
    });
    expect(pie).toMatchObject({ elements: [{ label: 'ok', angle: 90, radius: 1 }] });
    const box = parseChartData({
      ...BOX,
      elements: [{ label: 'A', min: '1', median: 2, outliers: [1, 'two', null, Number.NaN, 3] }],
    });
    expect(box).toMatchObject({
      elements: [
        {
          label: 'A',
          min: null,
          firstQuartile: null,
          median: 2,
          thirdQuartile: null,
          max: null,
          outliers: [1, 3],
        },
      ],
    });
  });

  it('caps 10,000 series to 20 and a million points to 1000, reading no further', () => {
    const series = Array.from({ length: 10_000 }, (_, i) => ({ label: `s${i}`, points: [[i, i]] }));
    const many = parseChartData({ ...SALES, elements: series });
    expect(many?.type === 'line' && many.elements.length).toBe(20);
    expect(many?.truncated).toBe(true);

    const points: unknown[] = Array.from({ length: 1_000_000 }, (_, i) => [i, i]);
    // Reading past the cap would throw here (and so give undefined).
    Object.defineProperty(points, 5000, {
      get() {
        throw new Error('read past the cap');
      },
    });
    const long = parseChartData({ ...SCATTER, elements: [{ label: 'big', points }] });
    expect(long?.type === 'scatter' && long.elements[0]!.points.length).toBe(1000);
    expect(long?.truncated).toBe(true);
  });

  it('cuts huge strings to 200 characters, never through a surrogate pair', () => {
    const huge = 'x'.repeat(5_000_000);
    const parsed = parseChartData({
      ...SCATTER,
      title: huge,
      elements: [
        {
          label: `${'a'.repeat(199)}😀`,
          points: [
            [huge, 1],
            ['short', 2],
          ],
        },
      ],
    });
    expect(parsed?.title).toBe('x'.repeat(200));
    expect(parsed?.truncated).toBe(true);
    const [series] = parsed?.type === 'scatter' ? parsed.elements : [];
    expect(series?.label).toBe('a'.repeat(199));
    expect(series?.points).toEqual([
      ['x'.repeat(200), 1],
      ['short', 2],
    ]);
  });

  it('caps bars, groups of bars, pie wedges, boxes, outliers and composite charts', () => {
    const bars = parseChartData({
      ...BAR,
      elements: Array.from({ length: 5000 }, (_, i) => ({
        label: `b${i}`,
        group: `g${i % 30}`,
        value: i,
      })),
    });
    const kept = bars?.type === 'bar' ? bars.elements : [];
    expect(kept).toHaveLength(1000);
    expect(new Set(kept.map(b => b.group)).size).toBe(20);
    expect(bars?.truncated).toBe(true);

    const wedges = Array.from({ length: 2000 }, () => ({ label: 'w', angle: 0.1, radius: 1 }));
    const pie = parseChartData({ ...PIE, elements: wedges });
    expect(pie?.type === 'pie' && pie.elements.length).toBe(1000);

    const box = BOX.type === 'box' ? BOX.elements[0]! : undefined;
    const boxes = parseChartData(
      { ...BOX, elements: Array.from({ length: 50 }, () => ({ ...box, outliers: [1, 2, 3, 4] })) },
      { maxSeries: 3, maxPoints: 2 },
    );
    expect(boxes?.type === 'box' && boxes.elements.map(b => b.outliers)).toEqual([
      [1, 2],
      [1, 2],
      [1, 2],
    ]);

    const composite = parseChartData({ ...COMPOSITE, charts: Array(20).fill(SCATTER) });
    expect(composite?.type === 'composite' && composite.charts.length).toBe(8);
    expect(composite?.truncated).toBe(true);
    // A chart inside keeps its own flag; the composite's says something inside was cut.
    const inner = parseChartData({
      ...COMPOSITE,
      charts: [{ ...SCATTER, title: 'y'.repeat(300) }],
    });
    expect(inner?.truncated).toBe(true);
  });

  it('takes caller caps, and falls back to the defaults for nonsense ones', () => {
    const parsed = parseChartData(SALES, { maxSeries: 1, maxPoints: 3, maxText: 5 });
    expect(parsed).toEqual({
      ...SALES,
      title: 'Sales',
      truncated: true,
      elements: [
        {
          label: 'north',
          points: [
            [0, 3],
            [1, 6],
            [2, 9],
          ],
        },
      ],
    });
    expect(parseChartData(SALES, { maxSeries: Number.NaN, maxPoints: Infinity })).toEqual(SALES);
    const none = parseChartData(COMPOSITE, { maxCharts: 0 });
    expect(none).toBeUndefined();
  });
});

describe('chartSummary', () => {
  it('summarises a line chart: series, point counts and y ranges', () => {
    expect(chartSummary(SALES)).toBe(
      'Line chart "Sales by month" (x: month, y: sales, log scale): 2 series — ' +
        'north: 12 points, y 3 to 41; south: 12 points, y 1 to 17.',
    );
  });

  it('gives the date range of a datetime line, without midnight', () => {
    expect(chartSummary(DATES)).toBe(
      'Line chart: 1 series — series 1: 3 points, x 2024-01-01 to 2024-01-03, y 1.5 to 3.',
    );
  });

  it('gives x and y ranges of a scatter', () => {
    expect(chartSummary(SCATTER)).toBe(
      'Scatter chart: 1 series — samples: 2 points, x 1 to 2.5, y 4 to 6.',
    );
  });

  it('lists bars as label=value, with their group when there are several, up to 8', () => {
    expect(chartSummary(BAR)).toBe(
      'Bar chart "Sold": 4 bars — tea (2024)=3, cake (2024)=5.5, tea (2025)=4, cake (2025)=none.',
    );
    const many: SingleChartData = {
      ...AXES,
      type: 'bar',
      elements: Array.from({ length: 12 }, (_, i) => ({ label: `m${i}`, group: '', value: i })),
    };
    expect(chartSummary(many)).toBe(
      'Bar chart: 12 bars — m0=0, m1=1, m2=2, m3=3, m4=4, m5=5, m6=6, m7=7 and 4 more.',
    );
  });

  it("gives a pie's wedges as shares of the whole", () => {
    expect(chartSummary(PIE)).toBe('Pie chart: 3 wedges — rent 50%, food 33.33%, wedge 3 16.67%.');
  });

  it('gives each box its median, quartiles, whiskers and outliers', () => {
    expect(chartSummary(BOX)).toBe(
      'Box plot (y: ms): 2 boxes — A: median 0.0307, quartiles -0.5082 to 0.488, ' +
        'whiskers -1.889 to 1.294, 2 outliers; B: median 3, quartiles 2 to 4, whiskers 1 to 5.',
    );
  });

  it('names a chart it cannot read, and each chart of a composite', () => {
    expect(chartSummary(UNKNOWN)).toBe(
      'Chart "heatmap": its data is not of a kind read as data (e.g. an image or a heatmap).',
    );
    expect(chartSummary(COMPOSITE)).toBe(
      'Figure "Two panels" with 2 charts: (1) Scatter chart: 1 series — samples: 2 points, ' +
        'x 1 to 2.5, y 4 to 6. (2) Bar chart "Sold": 4 bars — tea (2024)=3, cake (2024)=5.5, ' +
        'tea (2025)=4, cake (2025)=none.',
    );
  });

  it('writes numbers with at most 4 significant digits, very large and small ones as exponents', () => {
    const chart: SingleChartData = {
      ...AXES,
      type: 'bar',
      elements: [
        { label: 'a', group: '', value: 1234567 },
        { label: 'b', group: '', value: 0.000123456 },
        { label: 'c', group: '', value: 3.14159 },
        { label: 'd', group: '', value: -42 },
        { label: 'e', group: '', value: 0 },
      ],
    };
    expect(chartSummary(chart)).toBe(
      'Bar chart: 5 bars — a=1.235e+6, b=1.235e-4, c=3.142, d=-42, e=0.',
    );
  });

  it('says when data was cut, keeps labels on one line and stays within 600 characters', () => {
    expect(chartSummary({ ...SCATTER, truncated: true })).toMatch(/ Some data was cut\.$/);
    expect(
      chartSummary({ ...SCATTER, elements: [{ label: 'two\nlines', points: [[1, 2]] }] }),
    ).toContain('two lines: 1 point, x 1, y 2.');
    const wide: SingleChartData = {
      ...AXES,
      type: 'line',
      title: 't'.repeat(200),
      elements: Array.from({ length: 20 }, (_, i) => ({
        label: `${'series'.repeat(30)} ${i}`,
        points: [[i, i]],
      })),
    };
    const text = chartSummary(wide);
    expect(text).toHaveLength(600);
    expect(text.endsWith('…')).toBe(true);
    const composite = chartSummary({
      type: 'composite',
      title: null,
      charts: Array(8).fill(wide),
      truncated: true,
    });
    expect(composite.length).toBeLessThanOrEqual(600);
  });
});
