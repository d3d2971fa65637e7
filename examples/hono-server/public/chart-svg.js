// Draws a matplotlib figure's chart data (`images[i].chart`) as SVG, built element by element:
// titles, labels and tick texts come from the sandbox, so they only ever go in as textContent.
import { HEIGHT, PLOT, WIDTH, layoutChart } from './chart-layout.js';
import { el } from './dom.js';

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attributes, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * The chart drawn from its data, or undefined when this renderer does not draw it (box, unknown,
 * a composite with such a subplot, nothing finite): show the PNG then.
 *
 * @example
 * const drawing = drawChart(image.chart);
 * figure.append(drawing ?? pngImage);
 */
export function drawChart(chart) {
  try {
    const charts = chart.type === 'composite' ? chart.charts : [chart];
    const layouts = charts.map(layoutChart);
    if (layouts.length === 0 || layouts.some(layout => layout === undefined)) return undefined;
    const box = el('div', 'chart-drawing');
    box.dataset.chartType = chart.type;
    if (chart.type === 'composite' && chart.title)
      box.append(el('div', 'chart-suptitle', chart.title));
    for (const layout of layouts) box.append(drawLayout(layout));
    if (chart.truncated || layouts.some(layout => layout.truncated))
      box.append(
        el('div', 'note', 'Drawn from the first points only: the sandbox capped the data.'),
      );
    return box;
  } catch (error) {
    // Data this code did not expect: the PNG is still right.
    console.warn('chart not drawn', error);
    return undefined;
  }
}

function drawLayout(layout) {
  const root = svg('svg', {
    class: 'chart-svg',
    'data-testid': 'chart-svg',
    'data-chart-type': layout.type,
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    width: WIDTH,
    height: HEIGHT,
    role: 'img',
  });
  root.setAttribute('aria-label', layout.title ?? `${layout.type} chart`);
  if (layout.title) root.append(svg('title', {}, layout.title));
  if (layout.axes) root.append(drawAxes(layout));
  const marks = svg('g', { class: 'chart-marks' });
  for (const shape of layout.shapes) marks.append(drawShape(shape));
  root.append(marks);
  if (layout.title)
    root.append(svg('text', { class: 'chart-title', x: WIDTH / 2, y: 18 }, layout.title));
  if (layout.xLabel) {
    const x = (PLOT.left + PLOT.right) / 2;
    root.append(svg('text', { class: 'chart-x-label', x, y: HEIGHT - 6 }, layout.xLabel));
  }
  if (layout.yLabel) {
    const y = (PLOT.top + PLOT.bottom) / 2;
    const transform = `rotate(-90 14 ${y})`;
    root.append(svg('text', { class: 'chart-y-label', x: 14, y, transform }, layout.yLabel));
  }
  const drawing = el('div', 'chart-one');
  drawing.append(root);
  if (layout.legend.length > 0) drawing.append(drawLegend(layout.legend));
  return drawing;
}

function drawAxes(layout) {
  const axes = svg('g', { class: 'chart-axes' });
  for (const tick of layout.yTicks) {
    axes.append(
      svg('line', { class: 'chart-grid', x1: PLOT.left, x2: PLOT.right, y1: tick.at, y2: tick.at }),
      svg('text', { class: 'chart-tick y', x: PLOT.left - 6, y: tick.at + 4 }, tick.label),
    );
  }
  for (const tick of layout.xTicks)
    axes.append(
      svg('text', { class: 'chart-tick x', x: tick.at, y: PLOT.bottom + 16 }, tick.label),
    );
  axes.append(
    svg('line', {
      class: 'chart-axis',
      x1: PLOT.left,
      x2: PLOT.right,
      y1: PLOT.bottom,
      y2: PLOT.bottom,
    }),
    svg('line', {
      class: 'chart-axis',
      x1: PLOT.left,
      x2: PLOT.left,
      y1: PLOT.top,
      y2: PLOT.bottom,
    }),
  );
  return axes;
}

function drawShape(shape) {
  switch (shape.kind) {
    case 'line':
      return svg('polyline', {
        class: 'chart-line',
        points: shape.points.map(point => point.join(',')).join(' '),
        stroke: shape.color,
      });
    case 'dot':
      return svg('circle', {
        class: 'chart-dot',
        cx: shape.x,
        cy: shape.y,
        r: 3,
        fill: shape.color,
      });
    case 'bar': {
      const { x, y, width, height, color } = shape;
      const bar = svg('rect', { class: 'chart-bar', x, y, width, height, fill: color });
      bar.append(svg('title', {}, shape.label));
      return bar;
    }
    case 'wedge': {
      const wedge = svg('path', { class: 'chart-wedge', d: shape.d, fill: shape.color });
      if (shape.label) wedge.append(svg('title', {}, shape.label));
      return wedge;
    }
  }
}

function drawLegend(entries) {
  const list = el('ul', 'chart-legend');
  for (const { label, color } of entries) {
    const item = el('li');
    const swatch = el('span', 'swatch');
    // A colour from chart-layout.js's own palette, never from the data.
    swatch.style.background = color;
    item.append(swatch, label);
    list.append(item);
  }
  return list;
}
