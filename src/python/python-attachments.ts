import type { UIMessage } from 'ai';
import type { SandboxInputFile } from '../sandbox/types.ts';
import { formatBytes } from './python-artifacts.ts';

/** What {@link pythonAttachments} returns. */
export type PythonAttachments<MESSAGE extends UIMessage> = {
  /** The conversation, each attachment also named in a text part (with its path for python). */
  messages: MESSAGE[];
  /** The attachments as input files under /tmp/inputs, for `pythonTool({ files })`. */
  files: SandboxInputFile[];
};

const EXTENSIONS: Record<string, string> = {
  'text/csv': 'csv',
  'text/plain': 'txt',
  'application/json': 'json',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
};

/**
 * Makes files the user attached in the chat (UI message `file` parts with `data:` URLs, as
 * `useChat` sends them) available to the python tool under /tmp/inputs, and tells the model
 * where they are. Non-image files are replaced by that note (chat models take few file
 * types, CSV not among them); images stay for the model to see and are copied too.
 *
 * @example
 * ```ts
 * const { messages, files } = await pythonAttachments({ messages: body.messages });
 * const tools = { python: pythonTool({ sandbox, files }) };
 * const result = streamText({ model, tools, messages: await convertToModelMessages(messages) });
 * ```
 */
export async function pythonAttachments<MESSAGE extends UIMessage>({
  messages,
  maxBytes = 16 * 1024 * 1024,
}: {
  /** The conversation from the client. */
  messages: MESSAGE[];
  /** Bytes of all attachments together (the sandbox's `maxInputBytes`); larger ones are skipped with a note. */
  maxBytes?: number;
}): Promise<PythonAttachments<MESSAGE>> {
  const files: SandboxInputFile[] = [];
  const used = new Set<string>();
  let total = 0;
  const out: MESSAGE[] = [];
  for (const message of messages) {
    if (message.role !== 'user' || !message.parts.some(part => part.type === 'file')) {
      out.push(message);
      continue;
    }
    const parts: MESSAGE['parts'] = [];
    for (const part of message.parts) {
      if (part.type !== 'file' || !part.url.startsWith('data:')) {
        parts.push(part);
        continue;
      }
      const data = new Uint8Array(await (await fetch(part.url)).arrayBuffer());
      const name = uniqueName(part.filename, part.mediaType, used);
      const size = formatBytes(data.byteLength);
      const isImage = part.mediaType.startsWith('image/');
      if (isImage) parts.push(part);
      if (total + data.byteLength > maxBytes) {
        parts.push({
          type: 'text',
          text: `[Attached file ${name} (${size}) is too large for the python tool (limit ${formatBytes(maxBytes)} in all).]`,
        });
        continue;
      }
      total += data.byteLength;
      files.push({ path: `inputs/${name}`, data });
      parts.push({
        type: 'text',
        text: `[Attached file ${name} (${part.mediaType}, ${size}): python can read it at /tmp/inputs/${name}]`,
      });
    }
    out.push({ ...message, parts });
  }
  return { messages: out, files };
}

function uniqueName(filename: string | undefined, mediaType: string, used: Set<string>): string {
  const base = (filename ?? '')
    .split(/[\\/]/)
    .pop()!
    .replace(/[^\w.\- ]/g, '_')
    .slice(-100);
  const fallback = `file.${EXTENSIONS[mediaType] ?? 'bin'}`;
  const name = base === '' || /^\.+$/.test(base) ? fallback : base;
  let candidate = name;
  for (let n = 2; used.has(candidate); n++) candidate = name.replace(/(\.[^.]*)?$/, `-${n}$1`);
  used.add(candidate);
  return candidate;
}
