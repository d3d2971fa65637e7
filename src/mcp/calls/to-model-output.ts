import type { ToolResultPart } from 'ai';

/** What the model receives for a tool result (the AI SDK's `ToolResultOutput`). */
export type ModelOutput = ToolResultPart['output'];

type ContentPart = Extract<ModelOutput, { type: 'content' }>['value'][number];

/** The shape of an MCP `tools/call` result, loosely typed: servers vary. */
export type McpCallResult = {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
};

/**
 * Turns an MCP `tools/call` result into what the model reads: plain text when
 * the result is only text (the common case, and the cheapest in tokens), JSON
 * for structured-only results, and multi-part content (text + files) when it
 * carries images, audio or binary resources.
 *
 * @example
 * ```ts
 * toModelOutput({ content: [{ type: 'text', text: 'ok' }] }); // { type: 'text', value: 'ok' }
 * ```
 */
export function toModelOutput(result: McpCallResult): ModelOutput {
  const blocks = Array.isArray(result.content) ? result.content : [];
  if (blocks.length === 0) {
    return result.structuredContent === undefined
      ? { type: 'text', value: '' }
      : { type: 'json', value: result.structuredContent as never };
  }
  const parts = blocks.map(toContentPart);
  if (parts.every(part => part.type === 'text')) {
    return { type: 'text', value: parts.map(part => (part as { text: string }).text).join('\n\n') };
  }
  return { type: 'content', value: parts };
}

/** The text of an MCP result's content, for error messages and logs. */
export function contentText(content: readonly unknown[] | undefined): string {
  return (content ?? [])
    .map(toContentPart)
    .map(part => (part.type === 'text' ? part.text : `[${part.type}]`))
    .join('\n')
    .trim();
}

function toContentPart(block: unknown): ContentPart {
  const b = (block ?? {}) as Record<string, unknown>;
  switch (b.type) {
    case 'text':
      return { type: 'text', text: String(b.text ?? '') };
    case 'image':
    case 'audio':
      return file(String(b.data ?? ''), String(b.mimeType ?? `${b.type}/*`));
    case 'resource': {
      const resource = (b.resource ?? {}) as Record<string, unknown>;
      const uri = String(resource.uri ?? '');
      if (typeof resource.text === 'string') {
        return { type: 'text', text: `Resource ${uri}:\n${resource.text}` };
      }
      const mediaType = String(resource.mimeType ?? 'application/octet-stream');
      return file(String(resource.blob ?? ''), mediaType, fileName(uri));
    }
    case 'resource_link': {
      const about = typeof b.description === 'string' ? ` - ${b.description}` : '';
      return {
        type: 'text',
        text: `Resource link: ${String(b.name ?? b.uri)} <${String(b.uri)}>${about}`,
      };
    }
    default:
      // A block type newer than this code: hand the model its JSON rather than dropping it.
      return { type: 'text', text: JSON.stringify(block) };
  }
}

function file(base64: string, mediaType: string, filename?: string): ContentPart {
  return {
    type: 'file',
    mediaType,
    data: { type: 'data', data: base64 },
    ...(filename === undefined ? {} : { filename }),
  };
}

function fileName(uri: string): string {
  return uri.split(/[/\\]/).pop() || 'resource';
}
