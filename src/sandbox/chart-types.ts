// The chart types of the sandbox contract: a matplotlib figure's chart as data ("charts as
// data"), read in the sandbox by in-container/charts.py and checked on the host by
// output/chart-data.ts.

/**
 * How an axis places its values: a matplotlib scale, or dates / named categories.
 *
 * @example
 * ```ts
 * const scale: ChartScale = 'log';
 * ```
 */
export type ChartScale = 'linear' | 'log' | 'symlog' | 'logit' | 'datetime' | 'categorical';

/**
 * One coordinate: a number, a category name or an ISO date (per the axis's scale); null where
 * the data had no finite value (NaN, infinity).
 *
 * @example
 * ```ts
 * const point: [ChartValue, ChartValue] = ['2024-01-01T00:00:00+00:00', 41];
 * ```
 */
export type ChartValue = number | string | null;

/**
 * One series of a line or scatter chart.
 *
 * @example
 * ```ts
 * const north: ChartSeries = { label: 'north', points: [[0, 3], [1, 6]] };
 * ```
 */
export type ChartSeries = {
  /** The legend label; empty when the code gave none. */
  label: string;
  /** The [x, y] points in drawing order (the first ones, up to the cap). */
  points: [ChartValue, ChartValue][];
};

/**
 * One bar of a bar chart (vertical or horizontal).
 *
 * @example
 * ```ts
 * const bar: ChartBar = { label: 'Jan', group: '2024', value: 12 };
 * ```
 */
export type ChartBar = {
  /** Where the bar stands: its tick label (a category) or its position. */
  label: string;
  /** The label of its set of bars (one `ax.bar` call); empty when the code gave none. */
  group: string;
  /** Its height (its width for horizontal bars); null when not finite. */
  value: number | null;
};

/**
 * One wedge of a pie chart.
 *
 * @example
 * ```ts
 * const wedge: ChartWedge = { label: 'rent', angle: 120, radius: 1 };
 * const share = wedge.angle / 360; // of a full pie
 * ```
 */
export type ChartWedge = {
  /** The wedge's label; empty when it has none. */
  label: string;
  /** Its angle in degrees, 0 to 360 (the wedges of a full pie add up to 360). */
  angle: number;
  /** Its radius in data units. */
  radius: number;
};

/**
 * One box of a box plot, read from the drawn geometry (matplotlib's own quantiles).
 *
 * @example
 * ```ts
 * const box: ChartBox = {
 *   label: 'A', min: 1, firstQuartile: 2, median: 3, thirdQuartile: 4, max: 5, outliers: [9],
 * };
 * ```
 */
export type ChartBox = {
  /** Its tick label, or its position. */
  label: string;
  /** The lower whisker's end. */
  min: number | null;
  /** The box's lower edge. */
  firstQuartile: number | null;
  /** The median line; null when the plot drew none. */
  median: number | null;
  /** The box's upper edge. */
  thirdQuartile: number | null;
  /** The upper whisker's end. */
  max: number | null;
  /** The flier markers beyond the whiskers. */
  outliers: number[];
};

/** What every one-axes chart has. */
export type ChartAxes = {
  /** The axes's title; null when it has none. */
  title: string | null;
  /** The x axis label; null when it has none. */
  xLabel: string | null;
  /** The y axis label; null when it has none. */
  yLabel: string | null;
  /** How x values are placed (and so whether points' x are numbers, dates or categories). */
  xScale: ChartScale;
  /** How y values are placed. */
  yScale: ChartScale;
  /** True when a cap cut series, points, elements or strings (in the sandbox or here). */
  truncated: boolean;
};

/** What a one-axes chart holds, by type. */
export type ChartElements =
  | {
      /** Lines (`ax.plot`), with scatter series drawn on the same axes. */
      type: 'line';
      /** One series per line. */
      elements: ChartSeries[];
    }
  | {
      /** Markers only (`ax.scatter`, or `ax.plot` with no line). */
      type: 'scatter';
      /** One series per set of markers. */
      elements: ChartSeries[];
    }
  | {
      /** Bars (`ax.bar`, `ax.barh`, `ax.hist`). */
      type: 'bar';
      /** Every bar, grouped by `group`, in drawing order. */
      elements: ChartBar[];
    }
  | {
      /** A pie (`ax.pie`). */
      type: 'pie';
      /** Its wedges, in drawing order. */
      elements: ChartWedge[];
    }
  | {
      /** A box plot (`ax.boxplot`). */
      type: 'box';
      /** Its boxes, by position. */
      elements: ChartBox[];
    }
  | {
      /** Data that is none of the above. */
      type: 'unknown';
      /** Always empty. */
      elements: [];
    };

/**
 * The chart of one axes. `type` says what `elements` hold; `unknown` is an axes with data this
 * reading does not understand (an image, a heatmap), with no elements.
 *
 * @example
 * ```ts
 * if (chart.type === 'line') for (const s of chart.elements) console.log(s.label, s.points.length);
 * ```
 */
export type SingleChartData = ChartAxes & ChartElements;

/**
 * A matplotlib figure's chart as data: one axes's chart, or `composite` for a figure with
 * several axes holding data.
 *
 * @example
 * ```ts
 * const charts = chart.type === 'composite' ? chart.charts : [chart];
 * ```
 */
export type ChartData =
  | SingleChartData
  | {
      /** Several axes in one figure. */
      type: 'composite';
      /** The figure's suptitle; null when it has none. */
      title: string | null;
      /** One chart per axes with data (the first ones, up to the cap). */
      charts: SingleChartData[];
      /** True when a cap cut charts or anything in them. */
      truncated: boolean;
    };
