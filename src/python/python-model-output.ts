import type { ToolResultPart } from 'ai';
import { failureOutput } from '../repair/repair-record.ts';
import { describeArtifacts } from './python-artifacts.ts';
import type { PythonToolOutput } from './python-tool-output.ts';

/**
 * What the model sees of a python result: stdout, a line naming the images and files that
 * went to the user, and (with `images: true`) the images themselves as image content, for
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
}: {
  /** The tool's final output. */
  output: PythonToolOutput;
  /** Send images as image content. */
  images: boolean;
}): ToolResultPart['output'] {
  if (output.state === 'failed') {
    const { attempt, status, fingerprint, next: decision, reason } = output;
    return failureOutput({
      text: output.restored ? `[${output.restored}]\n${output.error}` : output.error,
      record: { attempt, status, fingerprint, decision, reason },
    });
  }
  if (output.state !== 'success') return { type: 'json', value: output };
  const text = [
    output.restored ? `[${output.restored}]` : '',
    output.stdout === '' ? '(no output)' : output.stdout,
    describeArtifacts(output),
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
