'use client';

// What a python cell showed, in order (its last expression as "Out", each display() call as
// "Displayed"), and its figures: drawn from their chart data when this page can draw the type,
// with matplotlib's PNG below as drawn; the PNG alone otherwise.
import type { PythonArtifact, PythonResult, PythonToolOutput } from 'ai-toolbelt';
import { useMemo } from 'react';
import { ChartDrawing, layoutFigure } from './chart-svg';
import { SafeHtml } from './safe-html';

type SuccessOutput = Extract<PythonToolOutput, { state: 'success' }>;

const MAX_JSON_CHARS = 4_000;

/**
 * The shown values of a successful python output; a figure a value shows (display(fig)) is drawn
 * in its place.
 *
 * @example
 * <CellResults output={output} />
 */
export function CellResults({ output }: { output: SuccessOutput }) {
  const results = output.results ?? [];
  if (results.length === 0) return null;
  const images = new Map((output.images ?? []).map(image => [image.name, image]));
  return (
    <div className="cell-results">
      {results.map((result, index) => {
        const image = result.image === undefined ? undefined : images.get(result.image);
        return (
          <div
            key={index}
            className="cell-result"
            data-main={String(result.main)}
            data-kind={image ? 'image' : kindOf(result)}
          >
            <span className="cell-label">{result.main ? 'Out:' : 'Displayed:'}</span>
            {image ? <Figure image={image} /> : <ResultValue result={result} />}
          </div>
        );
      })}
    </div>
  );
}

/** The names of the images `CellResults` shows, which the figure list leaves out. */
export function shownImages(output: SuccessOutput): Set<string> {
  return new Set((output.results ?? []).flatMap(result => (result.image ? [result.image] : [])));
}

/**
 * A figure: its chart drawn from data when possible, and the PNG (a toggle below the drawing).
 *
 * @example
 * {output.images.map(image => <Figure key={image.name} image={image} />)}
 */
export function Figure({ image }: { image: PythonArtifact }) {
  const layouts = useMemo(
    () => (image.chart ? layoutFigure(image.chart) : undefined),
    [image.chart],
  );
  const png = (
    // eslint-disable-next-line @next/next/no-img-element -- a data URL from the sandbox
    <img
      alt={`${image.name} (${image.width}×${image.height})`}
      width={image.width}
      height={image.height}
      src={image.url ?? `data:image/png;base64,${image.data}`}
    />
  );
  if (!image.chart || !layouts) return <figure className="chart">{png}</figure>;
  return (
    <figure className="chart" data-drawn="true">
      <ChartDrawing chart={image.chart} layouts={layouts} />
      <details className="chart-png" open>
        <summary>PNG, as matplotlib drew it</summary>
        {png}
      </details>
    </figure>
  );
}

function kindOf(result: PythonResult): string {
  if (result.html !== undefined) return 'html';
  if (result.markdown !== undefined) return 'markdown';
  if (result.latex !== undefined) return 'latex';
  if (result.json !== undefined) return 'json';
  return 'text';
}

// HTML through the sanitiser; markdown, LaTeX and SVG as their source text (no renderer here,
// and SVG from the sandbox could carry script); the rest as the value's text.
function ResultValue({ result }: { result: PythonResult }) {
  if (result.html !== undefined) return <SafeHtml html={result.html} text={result.text} />;
  if (result.markdown !== undefined) return <pre className="markdown">{result.markdown}</pre>;
  if (result.latex !== undefined) return <pre className="latex">{result.latex}</pre>;
  if (result.json !== undefined) {
    const json = JSON.stringify(result.json, null, 2) ?? '';
    return (
      <pre className="json">
        {json.length > MAX_JSON_CHARS ? `${json.slice(0, MAX_JSON_CHARS)}…` : json}
      </pre>
    );
  }
  return <pre className="result-text">{result.text}</pre>;
}
