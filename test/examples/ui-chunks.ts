import type { UIMessageChunk } from 'ai';

/**
 * Reads a UI message stream response (server-sent events) into its chunks.
 *
 * @example
 * const chunks = await readUIChunks(await app.request('/api/chat', init));
 */
export async function readUIChunks(response: Response): Promise<UIMessageChunk[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .map(event => event.replace(/^data: /, '').trim())
    .filter(data => data !== '' && data !== '[DONE]')
    .map(data => JSON.parse(data) as UIMessageChunk);
}

/** The data part payloads of one type, latest state per id, in first-seen order. */
export function dataParts<T>(chunks: UIMessageChunk[], type: `data-${string}`): T[] {
  const byId = new Map<string, T>();
  chunks.forEach((chunk, index) => {
    if (chunk.type === type) {
      const { id, data } = chunk as { id?: string; data: T };
      byId.set(id ?? `#${index}`, data);
    }
  });
  return [...byId.values()];
}

/** The streamed answer text. */
export function answerText(chunks: UIMessageChunk[]): string {
  return chunks.map(chunk => (chunk.type === 'text-delta' ? chunk.delta : '')).join('');
}

/** A chat request body with one user message, as the pages send it. */
export function chatRequest(text: string): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text }] }],
    }),
  };
}
