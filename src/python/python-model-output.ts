import type { ToolResultPart } from 'ai';
import { failureOutput } from '../repair/repair-record.ts';
import { chartSummary } from '../sandbox/output/chart-summary.ts';
import { describeArtifacts } from './python-artifacts.ts';
import { describeResults } from './python-results.ts';
import type { PythonToolOutput } from './python-tool-output.ts';

/**
 * What the model sees of a python result: stdout, the values the cell showed (its last
 * expression as `Out:`, `display()` calls as `Displayed:`), a line naming the images and files
 * that went to the user, a short summary of each chart's data, and (with `images: true`) the images themselves as image content, for
 * models that take images in tool results (`toolResultImagesMiddleware` turns those into a
 * short text stand-in for models that do not). A failure is a tool error holding the trimmed
 * error, with the repair decision attached for the repair guard.
 *
 * @example
 * ```ts
 * pythonModelOutput({ output, images: true }); // { type: 'content', value: [{ type: 'text', ... }, { type: 'file', ... }] }
 * ```
 */
export function pythonModelOutput({
  output,
  images,
  maxResultChars = 20_000,
}: {
  /** The tool's final output. */
  output: PythonToolOutput;
  /** Send images as image content. */
  images: boolean;
  /** Characters of shown values (`Out:`, `Displayed:`) in all. */
  maxResultChars?: number;
}): ToolResultPart['output'] {
  if (output.state === 'failed') {
    const { attempt, status, fingerprint, next: decision, reason } = output;
    return failureOutput({
      text: output.restored ? `[${output.restored}]\n${output.error}` : output.error,
      record: { attempt, status, fingerprint, decision, reason },
    });
  }
  if (output.state !== 'success') return { type: 'json', value: output };
  const results = output.results ?? [];
  const charts = output.images
    .filter(image => image.chart !== undefined)
    .map(image => `[Chart ${image.name}: ${chartSummary(image.chart!)}]`);
  const text = [
    output.restored ? `[${output.restored}]` : '',
    output.stdout === '' ? (results.length === 0 ? '(no output)' : '') : output.stdout,
    describeResults({ results, maxChars: maxResultChars }),
    describeArtifacts(output),
    ...charts,
  ]
    .filter(part => part !== '')
    .join('\n');
  type Part = Extract<ToolResultPart['output'], { type: 'content' }>['value'][number];
  const parts: Part[] = [];
  for (const image of images ? output.images : []) {
    const data =
      image.data !== undefined
        ? { type: 'data' as const, data: image.data }
        : image.url !== undefined
          ? { type: 'url' as const, url: new URL(image.url) }
          : undefined;
    if (data !== undefined) {
      parts.push({ type: 'file', data, mediaType: image.mediaType, filename: image.name });
    }
  }
  if (parts.length === 0) return { type: 'text', value: text };
  return { type: 'content', value: [{ type: 'text', text }, ...parts] };
}
