// MCP parts of an answer: a "Connect" card for a server that needs sign-in
// (opens its sign-in page in a new tab; the callback tab tells us when it is
// done) and a small form for a server's elicitation, posted back to
// /api/mcp/elicitations/:id. Kept apart from chat.js, which calls renderMcpPart.
// Plain DOM for a page without a build step; examples/next-app/app/mcp-parts.tsx renders the
// same parts in React, so the two share some lines on purpose.

// Typed values survive re-renders of the transcript while a form is open.
const drafts = new Map();
const connected = new Set();

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

window.addEventListener('message', event => {
  if (event.origin !== location.origin || event.data?.type !== 'mcp-connected') return;
  connected.add(event.data.server);
  for (const card of document.querySelectorAll(
    `.mcp-auth[data-server="${CSS.escape(event.data.server)}"]`,
  ))
    markConnected(card, event.data.server);
});

function markConnected(card, server) {
  card.dataset.state = 'connected';
  card.replaceChildren(el('span', '', `Connected to ${server}. Ask again to use its tools.`));
}

function renderAuth({ server, url }) {
  const card = el('div', 'mcp-auth');
  card.dataset.server = server;
  if (connected.has(server)) {
    markConnected(card, server);
    return card;
  }
  card.append(el('span', '', `${server} needs you to sign in before its tools can be used. `));
  const link = el('a', 'mcp-connect', `Connect ${server}`);
  link.href = url;
  link.target = '_blank';
  link.rel = 'opener';
  card.append(link);
  return card;
}

function field(id, name, schema, required) {
  const label = el('label', 'mcp-field');
  label.append(el('span', '', `${schema.title ?? name}${required ? ' *' : ''}`));
  const draft = drafts.get(id) ?? {};
  let input;
  if (Array.isArray(schema.enum)) {
    input = el('select');
    for (const value of schema.enum) {
      const option = el('option', '', String(value));
      option.value = String(value);
      input.append(option);
    }
  } else {
    input = el('input');
    input.type =
      schema.type === 'boolean'
        ? 'checkbox'
        : schema.type === 'number' || schema.type === 'integer'
          ? 'number'
          : 'text';
  }
  input.name = name;
  const value = draft[name] ?? schema.default;
  if (input.type === 'checkbox') input.checked = Boolean(value);
  else if (value !== undefined) input.value = String(value);
  if (required && input.type !== 'checkbox') input.required = true;
  input.addEventListener('input', () => {
    drafts.set(id, {
      ...drafts.get(id),
      [name]: input.type === 'checkbox' ? input.checked : input.value,
    });
  });
  label.append(input);
  return label;
}

function valuesOf(form, schema) {
  const content = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const input = form.elements.namedItem(name);
    if (!input) continue;
    if (property.type === 'boolean') content[name] = input.checked;
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

function renderElicitation({ id, server, message, requestedSchema, state }) {
  const box = el('div', 'mcp-elicitation');
  box.dataset.state = state;
  box.append(el('strong', '', `${server} asks: `), el('span', 'mcp-message', message));
  if (state !== 'pending') {
    box.append(
      el(
        'div',
        'mcp-answered',
        { accept: 'Sent.', decline: 'Declined.', cancel: 'Cancelled.' }[state],
      ),
    );
    return box;
  }
  const schema = requestedSchema ?? { properties: {} };
  const form = el('form', 'mcp-form');
  for (const [name, property] of Object.entries(schema.properties ?? {}))
    form.append(field(id, name, property, (schema.required ?? []).includes(name)));
  const answer = async action => {
    for (const button of form.querySelectorAll('button')) button.disabled = true;
    const body = action === 'accept' ? { action, content: valuesOf(form, schema) } : { action };
    await fetch(`/api/mcp/elicitations/${encodeURIComponent(id)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    drafts.delete(id);
  };
  const submit = el('button', 'mcp-accept', 'Send');
  submit.type = 'submit';
  const decline = el('button', 'mcp-decline', 'Decline');
  decline.type = 'button';
  decline.addEventListener('click', () => void answer('decline'));
  form.addEventListener('submit', event => {
    event.preventDefault();
    void answer('accept');
  });
  form.append(el('div', 'mcp-buttons'));
  form.lastChild.append(submit, decline);
  box.append(form);
  return box;
}

/** The element for a `data-mcp-auth` or `data-mcp-elicitation` part. */
export function renderMcpPart(part) {
  return part.type === 'data-mcp-auth' ? renderAuth(part.data) : renderElicitation(part.data);
}
