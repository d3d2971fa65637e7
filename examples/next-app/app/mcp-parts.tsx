'use client';

// MCP parts of an answer: a "Connect" card per server waiting for sign-in and a small form per
// elicitation. The React counterpart of examples/hono-server/public/mcp-parts.js (plain DOM, for a
// page without a build step), so the two share some lines on purpose.
import { type FormEvent, useEffect, useState } from 'react';
import type { McpAuthData } from 'ai-toolbelt';
import type { McpElicitationPart as McpElicitationData } from 'ai-toolbelt/mcp';
import './mcp.css';

type Property = {
  type?: string;
  title?: string;
  enum?: unknown[];
  default?: unknown;
};

/** A server that needs the user to sign in: its sign-in page opens in a new tab. */
export function McpAuthCard({ data }: { data: McpAuthData }) {
  const [connected, setConnected] = useState(false);
  useEffect(() => {
    // The callback tab tells us when the sign-in is done.
    const onMessage = (event: MessageEvent) => {
      if (event.origin !== location.origin) return;
      if (event.data?.type === 'mcp-connected' && event.data.server === data.server)
        setConnected(true);
    };
    window.addEventListener('message', onMessage);
    return () => window.removeEventListener('message', onMessage);
  }, [data.server]);
  if (connected) {
    return (
      <div className="mcp-auth" data-server={data.server} data-state="connected">
        Connected to {data.server}. Ask again to use its tools.
      </div>
    );
  }
  return (
    <div className="mcp-auth" data-server={data.server}>
      {data.server} needs you to sign in before its tools can be used.{' '}
      <a className="mcp-connect" href={data.url} target="_blank" rel="opener">
        Connect {data.server}
      </a>
    </div>
  );
}

/** A server's question during a tool call, as a small form posted back to the route. */
export function McpElicitationForm({ data }: { data: McpElicitationData }) {
  const schema = (data.requestedSchema ?? {}) as {
    properties?: Record<string, Property>;
    required?: string[];
  };
  const [sending, setSending] = useState(false);
  const answer = async (action: 'accept' | 'decline', form?: HTMLFormElement) => {
    setSending(true);
    const body =
      action === 'accept' && form ? { action, content: valuesOf(form, schema) } : { action };
    await fetch(`/api/mcp/elicitations/${encodeURIComponent(data.id)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  };
  return (
    <div className="mcp-elicitation" data-state={data.state}>
      <strong>{data.server} asks: </strong>
      <span className="mcp-message">{data.message}</span>
      {data.state === 'pending' ? (
        <form
          className="mcp-form"
          onSubmit={(event: FormEvent<HTMLFormElement>) => {
            event.preventDefault();
            void answer('accept', event.currentTarget);
          }}
        >
          {Object.entries(schema.properties ?? {}).map(([name, property]) => (
            <label key={name} className="mcp-field">
              <span>
                {property.title ?? name}
                {schema.required?.includes(name) ? ' *' : ''}
              </span>
              <Field
                name={name}
                property={property}
                required={schema.required?.includes(name) ?? false}
              />
            </label>
          ))}
          <div className="mcp-buttons">
            <button className="mcp-accept" type="submit" disabled={sending}>
              Send
            </button>
            <button
              className="mcp-decline"
              type="button"
              disabled={sending}
              onClick={() => void answer('decline')}
            >
              Decline
            </button>
          </div>
        </form>
      ) : (
        <div className="mcp-answered">
          {{ accept: 'Sent.', decline: 'Declined.', cancel: 'Cancelled.' }[data.state]}
        </div>
      )}
    </div>
  );
}

function Field({
  name,
  property,
  required,
}: {
  name: string;
  property: Property;
  required: boolean;
}) {
  if (Array.isArray(property.enum)) {
    return (
      <select name={name} defaultValue={String(property.default ?? property.enum[0] ?? '')}>
        {property.enum.map(value => (
          <option key={String(value)} value={String(value)}>
            {String(value)}
          </option>
        ))}
      </select>
    );
  }
  if (property.type === 'boolean')
    return <input type="checkbox" name={name} defaultChecked={Boolean(property.default)} />;
  const numeric = property.type === 'number' || property.type === 'integer';
  return (
    <input
      type={numeric ? 'number' : 'text'}
      name={name}
      required={required}
      defaultValue={property.default === undefined ? undefined : String(property.default)}
    />
  );
}

function valuesOf(form: HTMLFormElement, schema: { properties?: Record<string, Property> }) {
  const content: Record<string, string | number | boolean> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const input = form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement | null;
    if (input === null) continue;
    if (property.type === 'boolean') content[name] = (input as HTMLInputElement).checked;
    else if (input.value === '')
      continue; // left empty: the server's default applies
    else
      content[name] =
        property.type === 'number' || property.type === 'integer'
          ? Number(input.value)
          : input.value;
  }
  return content;
}
