// Turns the AI SDK's UI message stream (server-sent events of UI message chunks)
// into a UI message, the same shape `useChat` keeps, so the page can send the
// whole conversation back on the next turn. A tiny stand-in for `useChat`
// that needs no bundler.

/**
 * Builds one assistant message from UI message chunks.
 *
 * @example
 * const builder = new MessageBuilder();
 * builder.apply({ type: 'text-start', id: 't' });
 * builder.apply({ type: 'text-delta', id: 't', delta: 'Hi' });
 * builder.message.parts; // [{ type: 'text', text: 'Hi', state: 'streaming' }]
 */
export class MessageBuilder {
  constructor(id = crypto.randomUUID()) {
    /** The message so far: `{ id, role: 'assistant', parts }`. */
    this.message = { id, role: 'assistant', parts: [] };
    /** Error text of a failed stream (`error` chunk), if any. */
    this.error = undefined;
    this.texts = new Map(); // text and reasoning parts by stream id, while they stream
  }

  /** Applies one chunk. */
  apply(chunk) {
    const parts = this.message.parts;
    switch (chunk.type) {
      case 'start':
        if (chunk.messageId) this.message.id = chunk.messageId;
        break;
      case 'start-step':
        parts.push({ type: 'step-start' });
        break;
      case 'text-start':
      case 'reasoning-start': {
        const part = { type: chunk.type.slice(0, -6), text: '', state: 'streaming' };
        this.texts.set(chunk.id, part);
        parts.push(part);
        break;
      }
      case 'text-delta':
      case 'reasoning-delta':
        this.texts.get(chunk.id).text += chunk.delta;
        break;
      case 'text-end':
      case 'reasoning-end':
        this.texts.get(chunk.id).state = 'done';
        this.texts.delete(chunk.id);
        break;
      case 'tool-input-start':
        this.tool(chunk).state = 'input-streaming';
        break;
      case 'tool-input-available':
        Object.assign(this.tool(chunk), { state: 'input-available', input: chunk.input });
        break;
      case 'tool-input-error':
        Object.assign(this.tool(chunk), {
          state: 'output-error',
          input: chunk.input,
          errorText: chunk.errorText,
        });
        break;
      case 'tool-output-available': {
        const part = this.tool(chunk);
        Object.assign(part, { state: 'output-available', output: chunk.output });
        if (chunk.preliminary) part.preliminary = true;
        else delete part.preliminary;
        break;
      }
      case 'tool-output-error': {
        const part = this.tool(chunk);
        Object.assign(part, { state: 'output-error', errorText: chunk.errorText });
        delete part.preliminary;
        break;
      }
      case 'error':
        this.error = chunk.errorText;
        break;
      default:
        if (chunk.type.startsWith('data-') && !chunk.transient) this.data(chunk);
    }
  }

  // Finds the tool part of a call, creating it on its first chunk.
  tool(chunk) {
    let part = this.message.parts.find(p => p.toolCallId === chunk.toolCallId);
    if (!part) {
      part = chunk.dynamic
        ? { type: 'dynamic-tool', toolName: chunk.toolName, toolCallId: chunk.toolCallId }
        : { type: `tool-${chunk.toolName}`, toolCallId: chunk.toolCallId };
      part.state = 'input-streaming';
      part.input = undefined;
      this.message.parts.push(part);
    }
    return part;
  }

  // Data parts with an id are updated in place, as `useChat` does.
  data(chunk) {
    const existing =
      chunk.id !== undefined &&
      this.message.parts.find(p => p.type === chunk.type && p.id === chunk.id);
    if (existing) existing.data = chunk.data;
    else
      this.message.parts.push({
        type: chunk.type,
        ...(chunk.id !== undefined ? { id: chunk.id } : {}),
        data: chunk.data,
      });
  }
}

/**
 * Reads a `POST /api/chat` response, calling `onUpdate(builder)` after every
 * chunk. Non-stream answers (a 503 without a model, a 400) throw an Error
 * with the server's message.
 *
 * @example
 * const builder = await readChatResponse(await fetch('/api/chat', init), b => render(b.message));
 */
export async function readChatResponse(response, onUpdate, builder = new MessageBuilder()) {
  if (!response.ok) {
    const body = await response.text();
    let message = body;
    try {
      message = JSON.parse(body).error ?? body;
    } catch {}
    throw new Error(message || `HTTP ${response.status}`);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event
        .split('\n')
        .filter(line => line.startsWith('data:'))
        .map(line => line.slice(5).trimStart())
        .join('\n');
      if (data === '' || data === '[DONE]') continue;
      builder.apply(JSON.parse(data));
      onUpdate(builder);
    }
  }
  for (const part of builder.message.parts) if (part.state === 'streaming') part.state = 'done';
  onUpdate(builder);
  return builder;
}
