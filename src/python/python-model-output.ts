import type { ToolResultPart } from 'ai';
import { describeArtifacts } from './python-artifacts.ts';
import type { PythonToolOutput } from './python-tool-output.ts';

/**
 * What the model sees of a python result: stdout, a line naming the images and files that
 * went to the user, and (with `images: true`) the images themselves as image content, for
 * models that take images in tool results. `toolResultImagesMiddleware` turns those into a
 * short text stand-in for models that do not.
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
  if (output.state !== 'success') return { type: 'json', value: output };
  const text = [output.stdout === '' ? '(no output)' : output.stdout, describeArtifacts(output)]
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
