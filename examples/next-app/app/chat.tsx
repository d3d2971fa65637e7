'use client';

// First: before the AI SDK's modules build their zod schemas.
import './zod-jitless';
import { useChat } from '@ai-sdk/react';
import { type FormEvent, useRef, useState } from 'react';
import type { ToolbeltUIMessage } from 'ai-toolbelt';
import { McpAuthCard, McpElicitationForm } from './mcp-parts';
import { PythonTimeline, usePythonHistory } from './python-timeline';
import { ToolSelection } from './tool-selection';

/** The conversation: `useChat` against /api/chat, rendering every part of each answer. */
export function Chat() {
  const { messages, sendMessage, status, error } = useChat<ToolbeltUIMessage>();
  const history = usePythonHistory(messages);
  const [input, setInput] = useState('');
  const attach = useRef<HTMLInputElement>(null);
  const busy = status === 'submitted' || status === 'streaming';

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!input.trim() || busy) return;
    // useChat turns a FileList into `file` parts with data URLs; the route hands them to python.
    const files = attach.current?.files;
    void sendMessage({ text: input.trim(), ...(files && files.length > 0 ? { files } : {}) });
    setInput('');
    if (attach.current) attach.current.value = '';
  };

  return (
    <>
      <section id="messages" aria-live="polite">
        {messages.map(message => (
          <article key={message.id} className={`message ${message.role}`}>
            {message.parts.map((part, index) => {
              const key = `${message.id}-${index}`;
              switch (part.type) {
                case 'text':
                  return (
                    <div key={key} className="text">
                      {part.text}
                    </div>
                  );
                case 'file':
                  return (
                    <div key={key} className="attachment">
                      Attached: {part.filename}
                    </div>
                  );
                case 'data-tool-selection': {
                  // Later steps usually get the same tools: show a step only when its selection changed.
                  const previous = message.parts
                    .slice(0, index)
                    .findLast(p => p.type === 'data-tool-selection');
                  const names = (data: { selected: { name: string }[] }) =>
                    data.selected.map(tool => tool.name).join();
                  if (previous && names(previous.data) === names(part.data)) return null;
                  return <ToolSelection key={key} data={part.data} />;
                }
                case 'data-mcp-auth':
                  return <McpAuthCard key={key} data={part.data} />;
                case 'data-mcp-elicitation':
                  return <McpElicitationForm key={key} data={part.data} />;
                case 'tool-python':
                  return <PythonTimeline key={key} part={part} history={history} />;
                case 'dynamic-tool':
                  return (
                    <details key={key} className="tool" open={part.state !== 'input-streaming'}>
                      <summary>
                        Tool {part.toolName} <code>{JSON.stringify(part.input ?? {})}</code>
                      </summary>
                      {part.state === 'output-available' ? (
                        <pre>{outputText(part.output)}</pre>
                      ) : null}
                      {part.state === 'output-error' ? (
                        <pre className="error">{part.errorText}</pre>
                      ) : null}
                    </details>
                  );
                default:
                  return null;
              }
            })}
          </article>
        ))}
        {error ? <div className="error chat-error">{errorMessage(error)}</div> : null}
      </section>
      <form id="composer" onSubmit={submit} data-status={status}>
        <textarea
          id="input"
          rows={2}
          value={input}
          placeholder="Ask something, e.g. “What was the average daily high in Oslo over the past week?”"
          onChange={event => setInput(event.target.value)}
          onKeyDown={event => {
            if (event.key === 'Enter' && !event.shiftKey) submit(event);
          }}
        />
        <label
          className="attach"
          title="Attach files (CSV, JSON, images…): python reads them from /tmp/inputs"
        >
          Attach
          <input id="attach" ref={attach} type="file" multiple />
        </label>
        <button id="send" type="submit" disabled={busy}>
          Send
        </button>
      </form>
    </>
  );
}

// MCP results arrive as { content: [{ type: 'text', text }] }; show their text.
function outputText(output: unknown): string {
  const content = (output as { content?: Array<{ type: string; text?: string }> })?.content;
  const text = Array.isArray(content)
    ? content.map(item => item.text ?? `[${item.type}]`).join('\n')
    : JSON.stringify(output);
  return text.length > 400 ? `${text.slice(0, 400)}…` : text;
}

// The route answers errors as JSON ({ error }); useChat hands over the body as the message.
function errorMessage(error: Error): string {
  try {
    return (JSON.parse(error.message) as { error?: string }).error ?? error.message;
  } catch {
    return error.message;
  }
}
