// What a python cell showed, in order (its last expression as "Out", each display() call as
// "Displayed"), and its figures: drawn from their chart data when this page can draw the type,
// with matplotlib's PNG below as drawn; the PNG alone otherwise.
import { drawChart } from './chart-svg.js';
import { el } from './dom.js';
import { sanitizedFragment } from './safe-html.js';

const MAX_JSON_CHARS = 4_000;

/**
 * The shown values of a successful python output; figures a value shows (display(fig)) are drawn
 * in its place.
 *
 * @example
 * box.append(...renderResults(part.output));
 */
export function renderResults(output) {
  const images = new Map((output.images ?? []).map(image => [image.name, image]));
  return (output.results ?? []).map(result => {
    const row = el('div', 'cell-result');
    row.dataset.main = String(result.main);
    row.append(el('span', 'cell-label', result.main ? 'Out:' : 'Displayed:'));
    const image = result.image === undefined ? undefined : images.get(result.image);
    row.dataset.kind = image ? 'image' : kindOf(result);
    row.append(image ? renderFigure(image) : renderValue(result));
    return row;
  });
}

/** The names of the images `renderResults` shows, which the figure list leaves out. */
export function shownImages(output) {
  return new Set((output.results ?? []).map(result => result.image).filter(Boolean));
}

/**
 * A figure: its chart drawn from data when possible, and the PNG (a toggle below the drawing).
 *
 * @example
 * list.append(renderFigure(output.images[0]));
 */
export function renderFigure(image) {
  const figure = el('figure', 'chart');
  const img = el('img');
  img.alt = `${image.name} (${image.width}×${image.height})`;
  img.width = image.width;
  img.height = image.height;
  img.src = image.url ?? `data:image/png;base64,${image.data}`;
  const drawing = image.chart ? drawChart(image.chart) : undefined;
  if (drawing === undefined) {
    figure.append(img);
    return figure;
  }
  const png = el('details', 'chart-png');
  png.open = true;
  png.append(el('summary', '', 'PNG, as matplotlib drew it'), img);
  figure.append(drawing, png);
  return figure;
}

function kindOf(result) {
  if (result.html !== undefined) return 'html';
  if (result.markdown !== undefined) return 'markdown';
  if (result.latex !== undefined) return 'latex';
  if (result.json !== undefined) return 'json';
  return 'text';
}

// HTML through the sanitiser; markdown, LaTeX and SVG as their source text (no renderer here,
// and SVG from the sandbox could carry script); the rest as the value's text.
function renderValue(result) {
  switch (kindOf(result)) {
    case 'html': {
      const fragment = sanitizedFragment(result.html);
      if (fragment === undefined) break;
      const box = el('div', 'safe-html');
      box.append(fragment);
      return box;
    }
    case 'markdown':
      return el('pre', 'markdown', result.markdown);
    case 'latex':
      return el('pre', 'latex', result.latex);
    case 'json': {
      const json = JSON.stringify(result.json, null, 2) ?? '';
      return el(
        'pre',
        'json',
        json.length > MAX_JSON_CHARS ? `${json.slice(0, MAX_JSON_CHARS)}…` : json,
      );
    }
  }
  return el('pre', 'result-text', result.text);
}
