// The chat page: sends the conversation to POST /api/chat and renders the
// streamed answer: which tools each model call was offered, tool calls, every
// python attempt (the server's `data-repair` parts, see python-parts.js) and the text.
import { el } from './dom.js';
import { renderMcpPart } from './mcp-parts.js';
import { renderPythonCall, renderRepair } from './python-parts.js';
import { MessageBuilder, readChatResponse } from './ui-stream.js';

const $ = selector => document.querySelector(selector);
// Everything shown: { message, error }. Each turn sends back the whole conversation, less
// answers that failed: the server keeps no transcript (only python's interpreter per chat).
const transcript = [];
// One id per chat (this page load), sent with every message: python's variables live per chat.
const chatId = crypto.randomUUID();
let pending = false;

function short(value, max = 400) {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function renderSelection({ step, selected, dropped, ms, retrieval }) {
  const row = el('div', 'tool-selection');
  row.dataset.step = String(step);
  row.dataset.retrieval = retrieval;
  row.append(`Step ${step} (${retrieval}): tools offered to the model: `);
  for (const tool of selected) {
    const chip = el('span', `chip ${tool.reason}`, tool.name);
    chip.title =
      tool.reason === 'top-k' && tool.score !== undefined
        ? `retrieval score ${tool.score.toFixed(2)}`
        : tool.reason;
    row.append(chip);
  }
  row.append(` (${dropped} left out, ${ms.toFixed(1)} ms)`);
  return row;
}

// MCP results arrive as { content: [{ type: 'text', text }] }; show their text.
function outputText(output) {
  return Array.isArray(output?.content)
    ? short(output.content.map(item => item.text ?? `[${item.type}]`).join('\n'))
    : short(output);
}

function renderTool(part, repairs) {
  const name = part.type === 'dynamic-tool' ? part.toolName : part.type.slice(5);
  // The code, then each attempt of this call (the server's data-repair parts) and its results.
  if (name === 'python') return renderPythonCall(part, repairs);
  const box = el('details', 'tool');
  box.dataset.tool = name;
  const summary = el('summary', '', `Tool ${name} `);
  if (part.input !== undefined) summary.append(el('code', '', short(part.input, 120)));
  box.append(summary);
  if (part.state === 'output-available') box.append(el('pre', '', outputText(part.output)));
  if (part.state === 'output-error') box.append(el('pre', 'error', part.errorText));
  box.open = part.state !== 'input-streaming';
  return box;
}

function renderMessage(message, error) {
  const box = el('article', `message ${message.role}`);
  const repairs = new Map(); // toolCallId -> attempts, shown with their python call
  for (const part of message.parts) {
    if (part.type !== 'data-repair') continue;
    repairs.set(part.data.toolCallId, [...(repairs.get(part.data.toolCallId) ?? []), part.data]);
  }
  const calls = new Set(message.parts.map(part => part.toolCallId).filter(Boolean));
  let lastSelection = '';
  for (const part of message.parts) {
    if (part.type === 'text' && part.text) box.append(el('div', 'text', part.text));
    else if (part.type === 'file')
      box.append(el('div', 'attachment', `Attached: ${part.filename}`));
    else if (part.type === 'data-tool-selection') {
      // Later steps usually get the same tools; show a step only when its selection changed.
      const names = part.data.selected.map(tool => tool.name).join(',');
      if (names !== lastSelection) box.append(renderSelection(part.data));
      lastSelection = names;
    } else if (part.type === 'data-mcp-auth' || part.type === 'data-mcp-elicitation') {
      box.append(renderMcpPart(part));
    } else if (part.type === 'data-repair') {
      if (!calls.has(part.data.toolCallId)) box.append(renderRepair(part.data));
    } else if (part.type === 'dynamic-tool' || part.type.startsWith('tool-'))
      box.append(renderTool(part, repairs.get(part.toolCallId) ?? []));
  }
  if (error) box.append(el('div', 'error', error));
  return box;
}

function render() {
  const list = $('#messages');
  list.replaceChildren(...transcript.map(entry => renderMessage(entry.message, entry.error)));
  list.lastElementChild?.scrollIntoView({ block: 'end' });
}

/** A chosen file as a UI message `file` part (a data URL, as useChat sends it). */
function toFilePart(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () =>
      resolve({
        type: 'file',
        mediaType: file.type || 'application/octet-stream',
        filename: file.name,
        url: reader.result,
      });
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

async function send(text, files) {
  const fileParts = await Promise.all([...files].map(toFilePart));
  transcript.push({
    message: {
      id: crypto.randomUUID(),
      role: 'user',
      parts: [{ type: 'text', text }, ...fileParts],
    },
  });
  const messages = transcript.filter(entry => !entry.error).map(entry => entry.message);
  const builder = new MessageBuilder();
  const answer = { message: builder.message };
  transcript.push(answer);
  pending = true;
  $('#send').disabled = true;
  render();
  try {
    const response = await fetch('/api/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // The chat's id: the server keeps one python interpreter per chat (variables stay).
      body: JSON.stringify({ id: chatId, messages }),
    });
    await readChatResponse(response, render, builder);
  } catch (error) {
    builder.error = error.message;
  }
  answer.message = builder.message;
  answer.error = builder.error;
  pending = false;
  $('#send').disabled = false;
  render();
  // For tests and scripts: the answer is complete.
  document.body.dataset.idle = 'true';
}

async function showStatus() {
  const status = $('#status');
  try {
    const health = await (await fetch('/healthz')).json();
    const servers = health.mcp
      .map(server => `${server.name} (${server.state}, ${server.tools} tools)`)
      .join(', ');
    status.textContent = `Model: ${health.model.description}. MCP servers: ${servers || 'none'}. Top-${health.topK} tools per call.`;
    if (!health.model.configured)
      status.append(el('span', 'warn model-missing', health.model.problem));
    if (!health.python.enabled)
      status.append(
        el('span', 'warn python-disabled', `Python tool disabled: ${health.python.problem}`),
      );
  } catch (error) {
    status.textContent = `Cannot reach the server: ${error.message}`;
  }
}

$('#composer').addEventListener('submit', event => {
  event.preventDefault();
  const text = $('#input').value.trim();
  if (!text || pending) return;
  const files = [...$('#attach').files];
  $('#input').value = '';
  $('#attach').value = '';
  document.body.dataset.idle = 'false';
  void send(text, files);
});
$('#input').addEventListener('keydown', event => {
  if (event.key === 'Enter' && !event.shiftKey) {
    event.preventDefault();
    $('#composer').requestSubmit();
  }
});
$('#search-form').addEventListener('submit', async event => {
  event.preventDefault();
  const q = $('#search-input').value.trim();
  const answer = await (await fetch(`/api/tools/search?q=${encodeURIComponent(q)}`)).json();
  $('#search-results').replaceChildren(
    ...(answer.results ?? []).map(hit =>
      el(
        'li',
        '',
        `${hit.name} (${hit.server}, score ${hit.score.toFixed(2)}): ${hit.description ?? ''}`,
      ),
    ),
  );
  if (answer.error) $('#search-results').replaceChildren(el('li', 'error', answer.error));
});

void showStatus();
