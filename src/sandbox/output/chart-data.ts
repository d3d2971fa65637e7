// A matplotlib figure's chart as data ("charts as data"), read in the sandbox by
// in-container/charts.py. The sandboxed code can forge or bloat what arrives, so everything is
// checked and capped again here before a UI draws it or a model reads it.

import type {
  ChartScale,
  ChartValue,
  ChartSeries,
  ChartBar,
  ChartWedge,
  ChartBox,
  ChartElements,
  SingleChartData,
  ChartData,
} from '../chart-types.ts';
import { safeLabel } from '../../util/untrusted/safe-label.ts';

const SCALES: ReadonlySet<string> = new Set([
  'linear',
  'log',
  'symlog',
  'logit',
  'datetime',
  'categorical',
]);

type Caps = { maxSeries: number; maxPoints: number; maxText: number; maxCharts: number };

/**
 * Checks a chart from the sandbox (untrusted: the code that drew it can forge it): keeps what
 * fits the `ChartData` format, drops what does not (a wrong field becomes its empty value, a
 * malformed series, point or element is left out), takes control and invisible formatting
 * characters out of its text (`safeLabel`), cuts to the caps again (series, bar groups and
 * boxes to `maxSeries`; points per series, bars, wedges and outliers per box to `maxPoints`;
 * strings to `maxText`; a composite's charts to `maxCharts`) and sets `truncated` when it cut.
 * Undefined for anything that is not a chart. Never throws.
 *
 * @example
 * ```ts
 * const chart = parseChartData(JSON.parse(line).chart, { maxPoints: 200 });
 * if (chart?.type === 'bar') console.log(chart.elements.map(b => `${b.label}=${b.value}`));
 * ```
 */
export function parseChartData(
  value: unknown,
  caps: { maxSeries?: number; maxPoints?: number; maxText?: number; maxCharts?: number } = {},
): ChartData | undefined {
  try {
    const limits: Caps = {
      maxSeries: limit(caps.maxSeries, 20),
      maxPoints: limit(caps.maxPoints, 1000),
      maxText: limit(caps.maxText, 200),
      maxCharts: limit(caps.maxCharts, 8),
    };
    if (!isRecord(value) || value.type !== 'composite') return single(value, limits);
    const cut = new Cut(limits);
    const charts = cut.take(value.charts, limits.maxCharts, chart => single(chart, limits));
    if (charts.length === 0) return undefined;
    return {
      type: 'composite',
      title: cut.text(value.title),
      charts,
      truncated: value.truncated === true || cut.truncated || charts.some(c => c.truncated),
    };
  } catch {
    // A proxy or a getter that throws: nothing a JSON.parse result has, so not a chart.
    return undefined;
  }
}

function limit(given: number | undefined, fallback: number): number {
  return given !== undefined && Number.isFinite(given) ? Math.max(0, Math.floor(given)) : fallback;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Cuts to the caps, remembering whether it did. */
class Cut {
  truncated = false;
  readonly caps: Caps;

  constructor(caps: Caps) {
    this.caps = caps;
  }

  /** A string without control or invisible formatting characters, cut to `maxText`; null when not a string. */
  text(given: unknown): string | null {
    if (typeof given !== 'string') return null;
    // Titles, labels and category names are shown as they are: nothing may reorder or hide them.
    const value = safeLabel(given);
    if (value.length <= this.caps.maxText) return value;
    this.truncated = true;
    const cut = value.slice(0, this.caps.maxText);
    // Never half a surrogate pair: a lone one is not valid UTF-16 text.
    return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
  }

  /**
   * The first `max` items of `list` that `read` accepts (invalid ones are skipped). It stops at
   * the first accepted item past the cap, so a forged million-point series costs `max` reads.
   */
  take<T>(list: unknown, max: number, read: (item: unknown) => T | undefined): T[] {
    if (!Array.isArray(list)) return [];
    const kept: T[] = [];
    for (const item of list) {
      const found = read(item);
      if (found === undefined) continue;
      if (kept.length === max) {
        this.truncated = true;
        break;
      }
      kept.push(found);
    }
    return kept;
  }
}

function single(value: unknown, caps: Caps): SingleChartData | undefined {
  if (!isRecord(value)) return undefined;
  const cut = new Cut(caps);
  const axes = {
    title: cut.text(value.title),
    xLabel: cut.text(value.xLabel),
    yLabel: cut.text(value.yLabel),
    xScale: scale(value.xScale),
    yScale: scale(value.yScale),
  };
  const chart = elements(value.type, value.elements, cut);
  if (chart === undefined) return undefined;
  return { ...axes, ...chart, truncated: value.truncated === true || cut.truncated };
}

function scale(value: unknown): ChartScale {
  return typeof value === 'string' && SCALES.has(value) ? (value as ChartScale) : 'linear';
}

function elements(type: unknown, list: unknown, cut: Cut): ChartElements | undefined {
  const { maxSeries, maxPoints } = cut.caps;
  switch (type) {
    case 'line':
    case 'scatter':
      return { type, elements: cut.take(list, maxSeries, item => series(item, cut)) };
    case 'bar':
      return { type, elements: bars(list, cut) };
    case 'pie':
      return { type, elements: cut.take(list, maxPoints, item => wedge(item, cut)) };
    case 'box':
      return { type, elements: cut.take(list, maxSeries, item => box(item, cut)) };
    case 'unknown':
      return { type, elements: [] };
    default:
      return undefined;
  }
}

function series(item: unknown, cut: Cut): ChartSeries | undefined {
  if (!isRecord(item) || !Array.isArray(item.points)) return undefined;
  const points = cut.take(item.points, cut.caps.maxPoints, point => {
    if (!Array.isArray(point) || point.length !== 2) return undefined;
    const [x, y] = point.map(v => coordinate(v, cut));
    return x === undefined || y === undefined ? undefined : ([x, y] as [ChartValue, ChartValue]);
  });
  return { label: cut.text(item.label) ?? '', points };
}

/** A coordinate, or undefined when it is of no accepted type. */
function coordinate(value: unknown, cut: Cut): ChartValue | undefined {
  if (value === null || typeof value === 'string') return cut.text(value);
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  return undefined;
}

function finite(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function bars(list: unknown, cut: Cut): ChartBar[] {
  // Groups count as series: bars of groups past `maxSeries` are dropped.
  const groups = new Set<string>();
  return cut.take(list, cut.caps.maxPoints, item => {
    if (!isRecord(item)) return undefined;
    const group = cut.text(item.group) ?? '';
    if (!groups.has(group)) {
      if (groups.size === cut.caps.maxSeries) {
        cut.truncated = true;
        return undefined;
      }
      groups.add(group);
    }
    return { label: cut.text(item.label) ?? '', group, value: finite(item.value) };
  });
}

function wedge(item: unknown, cut: Cut): ChartWedge | undefined {
  if (!isRecord(item)) return undefined;
  const angle = finite(item.angle);
  const radius = finite(item.radius);
  if (angle === null || angle < 0 || angle > 360 || radius === null || radius < 0) return undefined;
  return { label: cut.text(item.label) ?? '', angle, radius };
}

function box(item: unknown, cut: Cut): ChartBox | undefined {
  if (!isRecord(item)) return undefined;
  const outliers = cut.take(item.outliers, cut.caps.maxPoints, v => finite(v) ?? undefined);
  return {
    label: cut.text(item.label) ?? '',
    min: finite(item.min),
    firstQuartile: finite(item.firstQuartile),
    median: finite(item.median),
    thirdQuartile: finite(item.thirdQuartile),
    max: finite(item.max),
    outliers,
  };
}
