import type { JSONValue } from 'ai';
import type { SandboxDisplayResult, SandboxImage } from '../sandbox/types.ts';
import { base64ByteLength, decodeBase64Into } from '../util/base64.ts';
import { boundJson } from '../util/untrusted/bound-json.ts';

/** Characters of a shown JSON value (`DockerSandbox`'s default `maxOutputBytes`). */
const MAX_JSON_CHARS = 1024 * 1024;

/**
 * A value a notebook cell showed (its last expression, or a `display()` call), as the python
 * tool streams it to the UI. HTML, SVG and markdown come from the sandboxed code: render them
 * only through a sanitiser (the examples use DOMPurify), never as they are.
 *
 * @example
 * ```tsx
 * {output.results?.map(r => r.html ? <SafeHtml html={r.html} /> : <pre>{r.text}</pre>)}
 * ```
 */
export type PythonResult = {
  /** The cell's last expression (at most one per cell). */
  main: boolean;
  /** Its `repr()`: what the model reads. */
  text: string;
  /** e.g. a DataFrame as a table. Untrusted HTML. */
  html?: string;
  /** Untrusted markdown. */
  markdown?: string;
  /** Untrusted SVG. */
  svg?: string;
  /** LaTeX source. */
  latex?: string;
  /** A JSON value. */
  json?: JSONValue;
  /** A shown image (or matplotlib figure): the name of its entry in the output's `images`. */
  image?: string;
};

/**
 * The shown values of a cell as the tool outputs them: images (a shown figure's PNG, with its
 * chart data) move to the images, named `output-N.png`, so the UI and the model handle every
 * image one way; the rest keeps its representations. JSON is bounded again here, whatever sandbox
 * made it (64 levels, 1 MiB of text, cut in place with a note: see `boundJson`), so the stream
 * that carries it never fails to encode it.
 *
 * @example
 * ```ts
 * const { results, images } = toPythonResults({ results: cell.results ?? [] });
 * ```
 */
export function toPythonResults({
  results,
}: {
  /** The cell's shown values, in order. */
  results: readonly SandboxDisplayResult[];
}): { results: PythonResult[]; images: SandboxImage[] } {
  const images: SandboxImage[] = [];
  const out = results.map(({ main, data, chart }) => {
    const result: PythonResult = { main, text: data['text/plain'] };
    if (data['text/html'] !== undefined) result.html = data['text/html'];
    if (data['text/markdown'] !== undefined) result.markdown = data['text/markdown'];
    if (data['image/svg+xml'] !== undefined) result.svg = data['image/svg+xml'];
    if (data['text/latex'] !== undefined) result.latex = data['text/latex'];
    if (data['application/json'] !== undefined)
      result.json = boundJson(data['application/json'], { maxChars: MAX_JSON_CHARS }).value;
    const png = data['image/png'] === undefined ? undefined : decode(data['image/png']);
    const size = png === undefined ? undefined : pngDimensions(png);
    if (png !== undefined && size !== undefined) {
      const name = `output-${images.length + 1}.png`;
      images.push({
        name,
        mediaType: 'image/png',
        ...size,
        data: png,
        ...(chart ? { chart } : {}),
      });
      result.image = name;
    }
    return result;
  });
  return { results: out, images };
}

/**
 * What the model reads of the shown values: the last expression as `Out:` and each
 * `display()` as `Displayed:`, as a notebook shows them, within `maxChars` in all.
 *
 * @example
 * ```ts
 * describeResults({ results, maxChars: 20_000 }); // 'Out:\n   a  b\n0  1  2'
 * ```
 */
export function describeResults({
  results,
  maxChars,
}: {
  /** The tool's results. */
  results: readonly PythonResult[];
  /** Characters in all. */
  maxChars: number;
}): string {
  let left = maxChars;
  const lines: string[] = [];
  for (const result of results) {
    const label = result.main ? 'Out:' : 'Displayed:';
    const body =
      result.image !== undefined && result.text.startsWith('<') ? result.image : result.text;
    const text = `${label}${body.includes('\n') ? '\n' : ' '}${body}`;
    if (text.length > left) {
      lines.push(
        `${text.slice(0, Math.max(0, left))}\n… (shown values cut at ${maxChars} characters)`,
      );
      break;
    }
    left -= text.length;
    lines.push(text);
  }
  return lines.join('\n');
}

function decode(base64: string): Uint8Array | undefined {
  const bytes = new Uint8Array(base64ByteLength(base64));
  return decodeBase64Into(base64, bytes) ? bytes : undefined;
}

/** Width and height from the IHDR chunk (the host checked the signature); no Buffer: Edge-safe. */
function pngDimensions(png: Uint8Array): { width: number; height: number } | undefined {
  if (png.byteLength < 24) return undefined;
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  return width > 0 && height > 0 ? { width, height } : undefined;
}
