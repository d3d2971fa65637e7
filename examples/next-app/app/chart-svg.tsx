'use client';

// Draws a matplotlib figure's chart data (`images[i].chart`) as SVG with React elements: titles,
// labels and tick texts come from the sandbox, so they are only ever rendered as text.
import type { ChartData } from 'ai-toolbelt';
import {
  type ChartLayout,
  HEIGHT,
  type LegendEntry,
  PLOT,
  type Shape,
  WIDTH,
  layoutChart,
} from './chart-layout';

/** The figure's charts laid out, or undefined when one of them cannot be drawn (show the PNG). */
export function layoutFigure(chart: ChartData): ChartLayout[] | undefined {
  try {
    const layouts = (chart.type === 'composite' ? chart.charts : [chart]).map(layoutChart);
    if (layouts.length === 0 || layouts.some(layout => layout === undefined)) return undefined;
    return layouts as ChartLayout[];
  } catch (error) {
    // Data this code did not expect: the PNG is still right.
    console.warn('chart not drawn', error);
    return undefined;
  }
}

/**
 * A figure's charts drawn from data (`layoutFigure`'s layouts), one SVG per axes.
 *
 * @example
 * const layouts = layoutFigure(image.chart);
 * return layouts ? <ChartDrawing chart={image.chart} layouts={layouts} /> : <img ... />;
 */
export function ChartDrawing({ chart, layouts }: { chart: ChartData; layouts: ChartLayout[] }) {
  const truncated = chart.truncated || layouts.some(layout => layout.truncated);
  return (
    <div className="chart-drawing" data-chart-type={chart.type}>
      {chart.type === 'composite' && chart.title ? (
        <div className="chart-suptitle">{chart.title}</div>
      ) : null}
      {layouts.map((layout, index) => (
        <ChartSvg key={index} layout={layout} />
      ))}
      {truncated ? (
        <div className="note">Drawn from the first points only: the sandbox capped the data.</div>
      ) : null}
    </div>
  );
}

function ChartSvg({ layout }: { layout: ChartLayout }) {
  const middle = (PLOT.top + PLOT.bottom) / 2;
  return (
    <div className="chart-one">
      <svg
        className="chart-svg"
        data-testid="chart-svg"
        data-chart-type={layout.type}
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        width={WIDTH}
        height={HEIGHT}
        role="img"
        aria-label={layout.title ?? `${layout.type} chart`}
      >
        {layout.title ? <title>{layout.title}</title> : null}
        {layout.axes ? <Axes layout={layout} /> : null}
        <g className="chart-marks">
          {layout.shapes.map((shape, index) => (
            <ShapeElement key={index} shape={shape} />
          ))}
        </g>
        {layout.title ? (
          <text className="chart-title" x={WIDTH / 2} y={18}>
            {layout.title}
          </text>
        ) : null}
        {layout.xLabel ? (
          <text className="chart-x-label" x={(PLOT.left + PLOT.right) / 2} y={HEIGHT - 6}>
            {layout.xLabel}
          </text>
        ) : null}
        {layout.yLabel ? (
          <text className="chart-y-label" x={14} y={middle} transform={`rotate(-90 14 ${middle})`}>
            {layout.yLabel}
          </text>
        ) : null}
      </svg>
      {layout.legend.length > 0 ? <Legend entries={layout.legend} /> : null}
    </div>
  );
}

function Axes({ layout }: { layout: ChartLayout }) {
  return (
    <g className="chart-axes">
      {layout.yTicks.map((tick, index) => (
        <g key={`y${index}`}>
          <line className="chart-grid" x1={PLOT.left} x2={PLOT.right} y1={tick.at} y2={tick.at} />
          <text className="chart-tick y" x={PLOT.left - 6} y={tick.at + 4}>
            {tick.label}
          </text>
        </g>
      ))}
      {layout.xTicks.map((tick, index) => (
        <text key={`x${index}`} className="chart-tick x" x={tick.at} y={PLOT.bottom + 16}>
          {tick.label}
        </text>
      ))}
      <line
        className="chart-axis"
        x1={PLOT.left}
        x2={PLOT.right}
        y1={PLOT.bottom}
        y2={PLOT.bottom}
      />
      <line className="chart-axis" x1={PLOT.left} x2={PLOT.left} y1={PLOT.top} y2={PLOT.bottom} />
    </g>
  );
}

function ShapeElement({ shape }: { shape: Shape }) {
  switch (shape.kind) {
    case 'line':
      return (
        <polyline
          className="chart-line"
          points={shape.points.map(point => point.join(',')).join(' ')}
          stroke={shape.color}
        />
      );
    case 'dot':
      return <circle className="chart-dot" cx={shape.x} cy={shape.y} r={3} fill={shape.color} />;
    case 'bar':
      return (
        <rect
          className="chart-bar"
          x={shape.x}
          y={shape.y}
          width={shape.width}
          height={shape.height}
          fill={shape.color}
        >
          <title>{shape.label}</title>
        </rect>
      );
    case 'wedge':
      return (
        <path className="chart-wedge" d={shape.d} fill={shape.color}>
          {shape.label ? <title>{shape.label}</title> : null}
        </path>
      );
  }
}

function Legend({ entries }: { entries: LegendEntry[] }) {
  return (
    <ul className="chart-legend">
      {entries.map((entry, index) => (
        <li key={index}>
          {/* A colour from chart-layout.ts's own palette, never from the data. */}
          <span className="swatch" style={{ background: entry.color }} />
          {entry.label}
        </li>
      ))}
    </ul>
  );
}
