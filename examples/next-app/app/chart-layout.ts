// Where a chart's data lands in its SVG: plain numbers and strings, no DOM, so chart-svg.tsx only
// turns shapes into elements. The values come from the sandbox (untrusted): nothing here is ever
// parsed as markup, and labels stay strings that React renders as text.
// examples/hono-server/public/chart-layout.js is the same code in JavaScript, on purpose: each
// example stands alone.
import type { ChartScale, SingleChartData } from 'ai-toolbelt';
type Value = number | string | null;

export type Tick = { at: number; label: string };
export type Shape =
  | { kind: 'line'; points: [number, number][]; color: string }
  | { kind: 'dot'; x: number; y: number; color: string }
  | {
      kind: 'bar';
      x: number;
      y: number;
      width: number;
      height: number;
      color: string;
      label: string;
    }
  | { kind: 'wedge'; d: string; color: string; label: string };
export type LegendEntry = { label: string; color: string };

/** What chart-svg.tsx draws for one axes. */
export type ChartLayout = {
  type: SingleChartData['type'];
  title: string | null;
  xLabel: string | null;
  yLabel: string | null;
  truncated: boolean;
  /** False for a pie: no axes, ticks or grid. */
  axes: boolean;
  xTicks: Tick[];
  yTicks: Tick[];
  shapes: Shape[];
  legend: LegendEntry[];
};

export const WIDTH = 480;
export const HEIGHT = 260;
/** The plot area inside the SVG; the margins hold the title, ticks and axis labels. */
export const PLOT = { left: 56, top: 32, right: WIDTH - 16, bottom: HEIGHT - 44 };
// matplotlib's tab10, so the drawing's colours match the PNG's defaults.
const COLORS = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#d62728',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
] as const;
const MAX_TICK_LABELS = 12;
// Round steps for a time axis, in ms: minutes and hours, then days, weeks, months (about), a year.
const MINUTE = 60_000;
const DAY = 1440 * MINUTE;
const DATE_STEPS = [
  ...[1, 5, 15, 60, 180, 360, 720].map(minutes => minutes * MINUTE),
  ...[1, 2, 7, 14, 30, 91, 182, 365].map(days => days * DAY),
];
type Drawn = Pick<ChartLayout, 'axes' | 'xTicks' | 'yTicks' | 'shapes' | 'legend'>;
type Axis = { position: (value: Value) => number | undefined; ticks: Tick[] };

/**
 * The shapes, ticks and legend of one axes's chart, or undefined for a type this renderer does
 * not draw (box, unknown) or data with nothing finite to draw: the caller shows the PNG instead.
 *
 * @example
 * const layout = layoutChart({ type: 'line', elements: [{ label: 'a', points: [[1, 2], [2, 4]] }], ... });
 * layout?.shapes[0]; // { kind: 'line', points: [[56, 216], [464, 32]], color: '#1f77b4' }
 */
export function layoutChart(chart: SingleChartData): ChartLayout | undefined {
  const drawn =
    chart.type === 'line' || chart.type === 'scatter'
      ? layoutSeries(chart)
      : chart.type === 'bar'
        ? layoutBars(chart)
        : chart.type === 'pie'
          ? layoutPie(chart)
          : undefined;
  if (drawn === undefined || drawn.shapes.length === 0) return undefined;
  return {
    type: chart.type,
    title: chart.title ?? null,
    xLabel: chart.xLabel ?? null,
    yLabel: chart.yLabel ?? null,
    truncated: chart.truncated === true,
    ...drawn,
  };
}

function color(index: number): string {
  return COLORS[index % COLORS.length]!;
}

function layoutSeries(
  chart: Extract<SingleChartData, { type: 'line' | 'scatter' }>,
): Drawn | undefined {
  const points = chart.elements.flatMap(series => series.points);
  const x = axis({
    values: points.map(p => p[0]),
    scale: chart.xScale,
    from: PLOT.left,
    to: PLOT.right,
  });
  const y = axis({
    values: points.map(p => p[1]),
    scale: chart.yScale,
    from: PLOT.bottom,
    to: PLOT.top,
  });
  if (x === undefined || y === undefined) return undefined;
  const shapes: Shape[] = [];
  chart.elements.forEach((series, index) => {
    // A point without a finite value breaks the line, as matplotlib leaves a gap at NaN.
    let run: [number, number][] = [];
    const flush = () => {
      if (run.length === 1)
        shapes.push({ kind: 'dot', x: run[0]![0], y: run[0]![1], color: color(index) });
      else if (run.length > 1) shapes.push({ kind: 'line', points: run, color: color(index) });
      run = [];
    };
    for (const [px, py] of series.points) {
      const ax = x.position(px);
      const ay = y.position(py);
      if (ax === undefined || ay === undefined) {
        if (chart.type === 'line') flush();
        continue;
      }
      if (chart.type === 'scatter') shapes.push({ kind: 'dot', x: ax, y: ay, color: color(index) });
      else run.push([ax, ay]);
    }
    flush();
  });
  const legend = chart.elements
    .map((series, index) => ({ label: series.label, color: color(index) }))
    .filter(entry => entry.label !== '');
  return { axes: true, xTicks: x.ticks, yTicks: y.ticks, shapes, legend };
}

function layoutBars(chart: Extract<SingleChartData, { type: 'bar' }>): Drawn | undefined {
  // Log bars need a baseline other than 0; the PNG shows those.
  if (chart.yScale !== 'linear') return undefined;
  const labels = unique(chart.elements.map(bar => bar.label));
  const groups = unique(chart.elements.map(bar => bar.group));
  const values = chart.elements.map(bar => bar.value).filter(isFiniteNumber);
  if (values.length === 0) return undefined;
  const y = axis({
    values: [0, ...values],
    scale: 'linear',
    from: PLOT.bottom,
    to: PLOT.top,
    widen: true,
  });
  if (y === undefined) return undefined;
  const band = (PLOT.right - PLOT.left) / labels.length;
  const inner = (band * 0.8) / groups.length;
  const zero = y.position(0)!;
  const shapes: Shape[] = [];
  for (const bar of chart.elements) {
    if (!isFiniteNumber(bar.value)) continue;
    const group = groups.indexOf(bar.group);
    const top = y.position(bar.value)!;
    shapes.push({
      kind: 'bar',
      x: round(PLOT.left + band * (labels.indexOf(bar.label) + 0.1) + inner * group),
      y: Math.min(top, zero),
      width: round(inner),
      height: round(Math.abs(top - zero)),
      color: color(group),
      label: bar.group ? `${bar.label} (${bar.group}): ${bar.value}` : `${bar.label}: ${bar.value}`,
    });
  }
  const every = Math.ceil(labels.length / MAX_TICK_LABELS);
  const xTicks = labels.flatMap((label, index) =>
    index % every === 0
      ? [{ at: round(PLOT.left + band * (index + 0.5)), label: short(label) }]
      : [],
  );
  const legend = groups
    .map((group, index) => ({ label: group, color: color(index) }))
    .filter(entry => entry.label !== '');
  return { axes: true, xTicks, yTicks: y.ticks, shapes, legend };
}

function layoutPie(chart: Extract<SingleChartData, { type: 'pie' }>): Drawn {
  const cx = (PLOT.left + PLOT.right) / 2;
  const cy = (PLOT.top + PLOT.bottom) / 2;
  const r = Math.min(PLOT.right - PLOT.left, PLOT.bottom - PLOT.top) / 2;
  const shapes: Shape[] = [];
  const legend: LegendEntry[] = [];
  // matplotlib's default: the first wedge starts at 3 o'clock and they go counter-clockwise.
  let start = 0;
  chart.elements.forEach((wedge, index) => {
    if (!(Number.isFinite(wedge.angle) && wedge.angle > 0)) return;
    const end = Math.min(start + wedge.angle, 360);
    const d = wedgePath(cx, cy, r, start, end);
    shapes.push({ kind: 'wedge', d, color: color(index), label: wedge.label });
    if (wedge.label !== '') legend.push({ label: wedge.label, color: color(index) });
    start = end;
  });
  return { axes: false, xTicks: [], yTicks: [], shapes, legend };
}

function wedgePath(cx: number, cy: number, r: number, start: number, end: number): string {
  const at = (degrees: number) => {
    const a = (degrees * Math.PI) / 180;
    return `${round(cx + r * Math.cos(a))} ${round(cy - r * Math.sin(a))}`;
  };
  // An arc from a point to itself draws nothing: a whole pie is two half circles.
  if (end - start >= 359.999)
    return `M ${at(0)} A ${r} ${r} 0 1 0 ${at(180)} A ${r} ${r} 0 1 0 ${at(0)} Z`;
  const large = end - start > 180 ? 1 : 0;
  return `M ${round(cx)} ${round(cy)} L ${at(start)} A ${r} ${r} 0 ${large} 0 ${at(end)} Z`;
}

/**
 * One axis: where a value lands (pixels from `from` to `to`) and the labelled ticks. Categories
 * sit at the middle of equal bands; numbers, dates (ISO strings) and log values on nice ticks.
 */
function axis({
  values,
  scale,
  from,
  to,
  widen = false,
}: {
  values: Value[];
  scale: ChartScale;
  from: number;
  to: number;
  widen?: boolean;
}): Axis | undefined {
  const categorical =
    scale === 'categorical' ||
    (scale !== 'datetime' && values.some(value => typeof value === 'string'));
  if (categorical) {
    const names = unique(values.filter(value => value !== null).map(String));
    if (names.length === 0) return undefined;
    const band = (to - from) / names.length;
    const at = (index: number) => round(from + band * (index + 0.5));
    const every = Math.ceil(names.length / MAX_TICK_LABELS);
    return {
      position: value => {
        const index = value === null ? -1 : names.indexOf(String(value));
        return index === -1 ? undefined : at(index);
      },
      ticks: names.flatMap((name, index) =>
        index % every === 0 ? [{ at: at(index), label: short(name) }] : [],
      ),
    };
  }
  const toNumber = numberOn(scale);
  let min = Infinity;
  let max = -Infinity;
  for (const value of values) {
    const n = toNumber(value);
    if (n === undefined) continue;
    min = Math.min(min, n);
    max = Math.max(max, n);
  }
  if (min > max) return undefined;
  const nice = niceTicks(min, max, { widen, dates: scale === 'datetime' });
  const place = (n: number) => round(from + ((n - nice.min) / (nice.max - nice.min)) * (to - from));
  return {
    position: value => {
      const n = toNumber(value);
      return n === undefined ? undefined : place(n);
    },
    ticks: nice.ticks.map(tick => ({
      at: place(tick),
      label: tickLabel(tick, scale, nice.max - nice.min),
    })),
  };
}

// A coordinate as a number on its scale: dates in ms, log values as powers of ten.
function numberOn(scale: ChartScale): (value: Value) => number | undefined {
  if (scale === 'datetime')
    return value => {
      const n = typeof value === 'string' ? Date.parse(value) : value;
      return isFiniteNumber(n) ? n : undefined;
    };
  if (scale === 'log')
    return value => (typeof value === 'number' && value > 0 ? Math.log10(value) : undefined);
  return value => (isFiniteNumber(value) ? value : undefined);
}

// About five ticks on round steps (1, 2, 2.5, 5 × 10^k; minutes to years for dates). `widen` (bars, up from 0) stretches the
// domain to the outer ticks; otherwise the data gets matplotlib's 5% margins, ticks inside them.
function niceTicks(
  min: number,
  max: number,
  { widen, dates }: { widen: boolean; dates: boolean },
): { min: number; max: number; ticks: number[] } {
  if (min === max) {
    const pad = Math.abs(min) * 0.1 || 1;
    min -= pad;
    max += pad;
  } else if (!widen) {
    const pad = (max - min) * 0.05;
    min -= pad;
    max += pad;
  }
  const rough = (max - min) / 5;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step =
    (dates ? DATE_STEPS.find(s => s >= rough) : undefined) ??
    [1, 2, 2.5, 5, 10].map(m => m * magnitude).find(s => s >= rough) ??
    rough;
  // The 1e-9s keep a bound that is a tick (up to rounding) from moving a step.
  const low = (widen ? Math.floor(min / step + 1e-9) : Math.ceil(min / step - 1e-9)) * step;
  const high = (widen ? Math.ceil(max / step - 1e-9) : Math.floor(max / step + 1e-9)) * step;
  const ticks: number[] = [];
  for (let i = 0; i <= 12 && low + i * step <= high + step / 1e6; i++)
    ticks.push(Number((low + i * step).toPrecision(12)));
  return widen ? { min: low, max: high, ticks } : { min, max, ticks };
}

function tickLabel(tick: number, scale: ChartScale, span: number): string {
  if (scale === 'datetime') {
    const iso = new Date(tick).toISOString();
    return span >= 2 * DAY ? iso.slice(0, 10) : iso.slice(11, 16);
  }
  return formatNumber(scale === 'log' ? 10 ** tick : tick);
}

function formatNumber(n: number): string {
  if (n !== 0 && (Math.abs(n) >= 1e6 || Math.abs(n) < 1e-3)) return n.toExponential(1);
  return String(Number(n.toPrecision(6)));
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}

function short(text: string, max = 14): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
