// charts.py run where it runs in production: inside the real sandbox (gVisor, the image's Python,
// numpy and matplotlib). One execute draws every figure and prints one JSON object keyed by case
// (each execute costs ~1 s); every output must also pass the host's parseChartData unchanged.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import type { DockerSandbox } from '../../../src/sandbox/index.ts';
import type { ChartData } from '../../../src/sandbox/chart-types.ts';
import { parseChartData } from '../../../src/sandbox/output/chart-data.ts';
import { describeSandbox, suiteSandbox } from '../sandbox-availability.ts';

const CHARTS_PY = readFileSync(
  join(import.meta.dirname, '..', '..', '..', 'src', 'sandbox', 'in-container', 'charts.py'),
  'utf8',
);

const CASES = String.raw`
import json, datetime
import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
import numpy as np

out = {}
def case(name, fig, **caps):
    out[name] = chart_data(fig, **caps)
    plt.close(fig)  # a figure left open would come back as a PNG too

months = list(range(12))
fig, ax = plt.subplots()
ax.plot(months, [3 + 3 * m + (m == 11) * 5 for m in months], label="north")
ax.plot(months, [1 + m + (m == 11) * 5 for m in months], label="south")
ax.axhline(10)  # a guide, not a series
ax.set_title("Sales by month"); ax.set_xlabel("month"); ax.set_ylabel("sales"); ax.set_yscale("log")
case("line", fig)

fig, ax = plt.subplots()
ax.plot([datetime.date(2024, 1, d) for d in (1, 2, 3)], [1.5, float("nan"), 3])
case("dates", fig)

fig, ax = plt.subplots()
ax.scatter([1, 2, 3], [4, 5, 6], label="samples")
case("scatter", fig)

fig, ax = plt.subplots()
ax.bar(["tea", "cake", "pie"], [3, 5, 2], label="2024")
case("bar", fig)

fig, ax = plt.subplots()
ax.barh(["north", "south"], [9, 6])
case("barh", fig)

fig, ax = plt.subplots()
ax.pie([1, 2, 3], labels=["rent", "food", "fun"], autopct="%1.0f%%")
case("pie", fig)

rng = np.random.default_rng(7)
groups = [rng.normal(0, 1, 200), rng.normal(5, 2, 200)]
fig, ax = plt.subplots()
ax.boxplot(groups, labels=["A", "B"])
case("box", fig)
out["boxNumpy"] = [[float(np.percentile(g, q)) for q in (25, 50, 75)] for g in groups]

fig, (left, right) = plt.subplots(1, 2)
left.plot([1, 2], [3, 4]); right.bar(["q"], [1]); fig.suptitle("Two panels")
case("composite", fig)

fig, ax = plt.subplots()
ax.plot(np.arange(5000), np.arange(5000) * 2.0)
case("manyPoints", fig)

fig, ax = plt.subplots()
for i in range(50):
    ax.plot([0, 1], [i, i], label=f"line {i}")
case("manyLines", fig)

fig, ax = plt.subplots()
ax.set_title("x" * 500)
ax.plot([1, 2], [1, 2])
case("longTitle", fig, max_text=50)

case("empty", plt.figure())
fig, ax = plt.subplots()
case("emptyAxes", fig)
out["notAFigure"] = chart_data("not a figure")
print(json.dumps(out, allow_nan=False))
`;

type Outputs = Record<string, ChartData | null> & { boxNumpy: number[][] };

describeSandbox('charts.py in the sandbox: matplotlib figures as chart data', () => {
  let sandbox: DockerSandbox;
  let out: Outputs;

  suiteSandbox({ warmPoolSize: 0, preimport: [] }, created => {
    sandbox = created;
  });

  beforeAll(async () => {
    const result = await sandbox.execute(`${CHARTS_PY}\n${CASES}`, { timeoutMs: 60_000 });
    expect(result.stderr).toBe('');
    expect(result.status).toBe('success');
    expect(result.images).toEqual([]);
    out = JSON.parse(result.stdout) as Outputs;
  }, 90_000);

  /** The case's output, narrowed to one chart type. */
  function chart<T extends ChartData['type']>(name: string, type: T) {
    const found = out[name] as ChartData | null;
    expect(found?.type).toBe(type);
    return found as Extract<ChartData, { type: T }>;
  }

  it('reads a line chart: labelled series, title, axis labels and a log y scale', () => {
    const line = chart('line', 'line');
    expect(line).toMatchObject({
      title: 'Sales by month',
      xLabel: 'month',
      yLabel: 'sales',
      xScale: 'linear',
      yScale: 'log',
      truncated: false,
    });
    // axhline is left out: two series, not three.
    expect(line.elements.map(s => s.label)).toEqual(['north', 'south']);
    expect(line.elements[0]!.points).toHaveLength(12);
    expect(line.elements[0]!.points.slice(0, 2)).toEqual([
      [0, 3],
      [1, 6],
    ]);
    expect(line.elements[1]!.points[11]).toEqual([11, 17]);
  });

  it('turns matplotlib date numbers into ISO dates, and NaN into null', () => {
    const line = chart('dates', 'line');
    expect(line.xScale).toBe('datetime');
    expect(line.elements).toEqual([
      {
        label: '',
        points: [
          ['2024-01-01T00:00:00+00:00', 1.5],
          ['2024-01-02T00:00:00+00:00', null],
          ['2024-01-03T00:00:00+00:00', 3],
        ],
      },
    ]);
  });

  it('reads a scatter from its collection offsets', () => {
    expect(chart('scatter', 'scatter').elements).toEqual([
      {
        label: 'samples',
        points: [
          [1, 4],
          [2, 5],
          [3, 6],
        ],
      },
    ]);
  });

  it('reads bars over string categories, vertical and horizontal', () => {
    const bar = chart('bar', 'bar');
    expect(bar.xScale).toBe('categorical');
    expect(bar.elements).toEqual([
      { label: 'tea', group: '2024', value: 3 },
      { label: 'cake', group: '2024', value: 5 },
      { label: 'pie', group: '2024', value: 2 },
    ]);
    const barh = chart('barh', 'bar');
    expect(barh.yScale).toBe('categorical');
    expect(barh.elements).toEqual([
      { label: 'north', group: '', value: 9 },
      { label: 'south', group: '', value: 6 },
    ]);
  });

  it('reads a pie: labelled wedges whose angles add up to 360', () => {
    const pie = chart('pie', 'pie');
    expect(pie.elements.map(w => w.label)).toEqual(['rent', 'food', 'fun']);
    const angles = pie.elements.map(w => w.angle);
    expect(angles.reduce((a, b) => a + b, 0)).toBeCloseTo(360, 3);
    expect(angles[2]).toBeCloseTo(180, 3);
    expect(pie.elements.every(w => w.radius === 1)).toBe(true);
  });

  it("reads a box plot of two groups: quartiles and medians match numpy's percentiles", () => {
    const box = chart('box', 'box');
    expect(box.elements.map(b => b.label)).toEqual(['A', 'B']);
    box.elements.forEach((b, i) => {
      const [q1, median, q3] = out.boxNumpy[i]!;
      // matplotlib computes its own quantiles: close to numpy's, not necessarily identical.
      expect(b.firstQuartile).toBeCloseTo(q1!, 2);
      expect(b.median).toBeCloseTo(median!, 2);
      expect(b.thirdQuartile).toBeCloseTo(q3!, 2);
      expect(b.min!).toBeLessThan(b.firstQuartile!);
      expect(b.max!).toBeGreaterThan(b.thirdQuartile!);
      for (const o of b.outliers) expect(o < b.min! || o > b.max!).toBe(true);
    });
  });

  it('reads a figure with two axes as a composite of two charts under the suptitle', () => {
    const composite = chart('composite', 'composite');
    expect(composite.title).toBe('Two panels');
    expect(composite.charts.map(c => c.type)).toEqual(['line', 'bar']);
    expect(composite.truncated).toBe(false);
  });

  it('keeps to the caps: 1000 points of 5000, 20 lines of 50, cut strings', () => {
    const points = chart('manyPoints', 'line');
    expect(points.truncated).toBe(true);
    expect(points.elements[0]!.points).toHaveLength(1000);
    expect(points.elements[0]!.points[999]).toEqual([999, 1998]);
    const lines = chart('manyLines', 'line');
    expect(lines.truncated).toBe(true);
    expect(lines.elements.map(s => s.label)).toEqual(
      Array.from({ length: 20 }, (_, i) => `line ${i}`),
    );
    const long = chart('longTitle', 'line');
    expect(long.title).toBe('x'.repeat(50));
    expect(long.truncated).toBe(true);
  });

  it('returns None for a figure without data, and for what is not a figure', () => {
    expect(out.empty).toBeNull();
    expect(out.emptyAxes).toBeNull();
    expect(out.notAFigure).toBeNull();
  });

  it("passes the host's parseChartData unchanged", () => {
    const charts = Object.entries(out).filter(([name, value]) => name !== 'boxNumpy' && value);
    expect(charts.length).toBeGreaterThanOrEqual(11);
    for (const [name, value] of charts) {
      expect({ name, parsed: parseChartData(value) }).toEqual({ name, parsed: value });
    }
  });
});
