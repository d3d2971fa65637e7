import { boundJson } from '../../util/untrusted/bound-json.ts';
import type { SandboxDisplayResult, SandboxMimeBundle } from '../types.ts';
import { parseChartData } from './chart-data.ts';
import { pngSize } from './png-size.ts';

const TEXT_TYPES = ['text/html', 'text/markdown', 'image/svg+xml', 'text/latex'] as const;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const JPEG_SIGNATURE = [0xff, 0xd8, 0xff];

/**
 * A `result` record from the interpreter, checked again on the host (the sandboxed code can
 * forge one): the known MIME types of the right shape, text within `maxChars` (`text/plain` is
 * cut, the others are dropped past it), JSON within 64 levels and about `maxChars` characters
 * (cut in place with a note, see `boundJson`: whatever encodes it next must not overflow its
 * stack), images that decode, the chart through `parseChartData`. Undefined when it is not a
 * result at all.
 *
 * @example
 * ```ts
 * const result = parseDisplayResult(JSON.parse(line), { maxChars: 1 << 20 });
 * ```
 */
export function parseDisplayResult(
  value: unknown,
  {
    maxChars,
  }: {
    /** Characters per text representation. */
    maxChars: number;
  },
): SandboxDisplayResult | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { main, data, chart } = value as Record<string, unknown>;
  if (typeof main !== 'boolean' || typeof data !== 'object' || data === null) return undefined;
  const given = data as Record<string, unknown>;
  const plain = given['text/plain'];
  if (typeof plain !== 'string') return undefined;
  const bundle: SandboxMimeBundle = {
    'text/plain':
      plain.length <= maxChars
        ? plain
        : `${plain.slice(0, maxChars)}\n… (${plain.length - maxChars} more characters cut)`,
  };
  for (const mime of TEXT_TYPES) {
    const text = given[mime];
    if (typeof text === 'string' && text.length <= maxChars) bundle[mime] = text;
  }
  const png = image(given['image/png'], bytes => pngSize(bytes) !== undefined);
  if (png !== undefined) bundle['image/png'] = png;
  const jpeg = image(given['image/jpeg'], bytes =>
    JPEG_SIGNATURE.every((byte, i) => bytes[i] === byte),
  );
  if (jpeg !== undefined) bundle['image/jpeg'] = jpeg;
  if (given['application/json'] !== undefined)
    bundle['application/json'] = boundJson(given['application/json'], { maxChars }).value;
  const parsedChart = chart === undefined ? undefined : parseChartData(chart);
  return { main, data: bundle, ...(parsedChart !== undefined ? { chart: parsedChart } : {}) };
}

function image(value: unknown, valid: (bytes: Buffer) => boolean): string | undefined {
  if (typeof value !== 'string' || value.length % 4 !== 0 || !BASE64.test(value)) return undefined;
  return valid(Buffer.from(value, 'base64')) ? value : undefined;
}
