// A chart's data in a few hundred characters, for a language model that cannot look at the PNG
// (or should not spend image tokens on it).
import type { ChartData, ChartValue, SingleChartData } from '../chart-types.ts';

const MAX_CHARS = 600;
/** Bars, wedges and boxes listed one by one before the rest is only counted. */
const MAX_LISTED = 8;

const KIND = {
  line: 'Line chart',
  scatter: 'Scatter chart',
  bar: 'Bar chart',
  pie: 'Pie chart',
  box: 'Box plot',
  unknown: 'Chart',
} as const;

/**
 * A short text (at most 600 characters) of what a chart shows: its kind, title, axes and, per
 * series, bar, wedge or box, the numbers that matter (4 significant digits).
 *
 * @example
 * ```ts
 * chartSummary(chart);
 * // 'Line chart "Sales by month" (x: month, y: sales, log scale): 2 series — north: 12 points,
 * //  y 3 to 41; south: 12 points, y 1 to 17.'
 * ```
 */
export function chartSummary(chart: ChartData): string {
  const text =
    chart.type === 'composite'
      ? `Figure${quoted(chart.title)} with ${count(chart.charts.length, 'chart')}: ` +
        chart.charts.map((c, i) => `(${i + 1}) ${single(c)}`).join(' ') +
        (chart.truncated ? ' Some data was cut.' : '')
      : single(chart);
  return text.length <= MAX_CHARS ? text : `${text.slice(0, MAX_CHARS - 1)}…`;
}

function single(chart: SingleChartData): string {
  const head = `${KIND[chart.type]}${quoted(chart.title)}${axes(chart)}`;
  const cut = chart.truncated ? ' Some data was cut.' : '';
  switch (chart.type) {
    case 'line':
    case 'scatter': {
      const ranged = chart.type === 'scatter' || chart.xScale !== 'linear';
      const parts = chart.elements.map((s, i) => {
        const name = s.label ? clean(s.label) : `series ${i + 1}`;
        const x = ranged
          ? span(
              'x',
              s.points.map(p => p[0]),
            )
          : '';
        return `${name}: ${count(s.points.length, 'point')}${x}${span(
          'y',
          s.points.map(p => p[1]),
        )}`;
      });
      return `${head}: ${count(parts.length, 'series', 'series')} — ${parts.join('; ')}.${cut}`;
    }
    case 'bar': {
      const grouped = new Set(chart.elements.map(b => b.group)).size > 1;
      const parts = chart.elements.map(b => {
        const where = grouped && b.group ? `${clean(b.label)} (${clean(b.group)})` : clean(b.label);
        return `${where}=${b.value === null ? 'none' : num(b.value)}`;
      });
      return `${head}: ${count(parts.length, 'bar')} — ${listed(parts)}.${cut}`;
    }
    case 'pie': {
      const total = chart.elements.reduce((sum, w) => sum + w.angle, 0);
      const parts = chart.elements.map(
        (w, i) =>
          `${w.label ? clean(w.label) : `wedge ${i + 1}`} ${num(total > 0 ? (w.angle / total) * 100 : 0)}%`,
      );
      return `${head}: ${count(parts.length, 'wedge')} — ${listed(parts)}.${cut}`;
    }
    case 'box': {
      const parts = chart.elements.map((b, i) => {
        const outliers = b.outliers.length > 0 ? `, ${count(b.outliers.length, 'outlier')}` : '';
        return (
          `${b.label ? clean(b.label) : `box ${i + 1}`}: median ${num(b.median)}, ` +
          `quartiles ${num(b.firstQuartile)} to ${num(b.thirdQuartile)}, ` +
          `whiskers ${num(b.min)} to ${num(b.max)}${outliers}`
        );
      });
      return `${head}: ${count(parts.length, 'box', 'boxes')} — ${listed(parts, '; ')}.${cut}`;
    }
    case 'unknown':
      return `${head}: its data is not of a kind read as data (e.g. an image or a heatmap).`;
  }
}

/** The axis labels and the scales that change how values read, in parentheses. */
function axes(chart: SingleChartData): string {
  const parts = [];
  if (chart.xLabel) parts.push(`x: ${clean(chart.xLabel)}`);
  if (chart.yLabel) parts.push(`y: ${clean(chart.yLabel)}`);
  for (const [axis, scale] of [
    ['x', chart.xScale],
    ['y', chart.yScale],
  ] as const) {
    // Dates and categories show in the values themselves.
    if (scale === 'linear' || scale === 'datetime' || scale === 'categorical') continue;
    parts.push(axis === 'y' && chart.xScale === 'linear' ? `${scale} scale` : `${scale} ${axis}`);
  }
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

/** `, y 3 to 41`: the smallest and largest numbers, or the first and last names or dates. */
function span(axis: string, values: ChartValue[]): string {
  const numbers = values.filter((v): v is number => typeof v === 'number');
  if (numbers.length > 0) {
    const low = numbers.reduce((a, b) => Math.min(a, b));
    const high = numbers.reduce((a, b) => Math.max(a, b));
    return low === high ? `, ${axis} ${num(low)}` : `, ${axis} ${num(low)} to ${num(high)}`;
  }
  const names = values.filter((v): v is string => typeof v === 'string').map(date);
  if (names.length === 0) return '';
  const [first, last] = [clean(names[0]!), clean(names[names.length - 1]!)];
  return first === last ? `, ${axis} ${first}` : `, ${axis} ${first} to ${last}`;
}

/** An ISO date from charts.py without the parts that say nothing (midnight, UTC). */
function date(value: string): string {
  const match = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)(:\d\d(?:\.\d+)?)?(\+00:00|Z)?$/.exec(value);
  if (match === null) return value;
  const [, day, time, seconds] = match;
  if (time === '00:00' && (seconds === undefined || /^:00(\.0+)?$/.test(seconds))) return day!;
  return `${day} ${time}`;
}

/** Up to 4 significant digits, in exponent form only when very large or small. */
function num(value: number | null): string {
  if (value === null) return 'none';
  const abs = Math.abs(value);
  if (abs !== 0 && (abs >= 1e6 || abs < 1e-3)) return value.toExponential(3).replace(/\.?0+e/, 'e');
  return String(Number(value.toPrecision(4)));
}

function listed(parts: string[], separator = ', '): string {
  const more = parts.length - MAX_LISTED;
  return parts.slice(0, MAX_LISTED).join(separator) + (more > 0 ? ` and ${more} more` : '');
}

function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function quoted(title: string | null): string {
  return title ? ` "${clean(title)}"` : '';
}

/** One line, no run of spaces: labels come from the sandboxed code. */
function clean(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
