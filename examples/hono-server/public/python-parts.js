// A python call in the chat: its code, each attempt (the server's `data-repair` parts, with the
// output streamed while it runs), what the cell showed, its figures, files and notes.
import { el } from './dom.js';
import { renderFigure, renderResults, shownImages } from './python-results.js';

/**
 * One attempt's row: running (with what it printed so far), failed, repairing or succeeded.
 *
 * @example
 * box.append(renderRepair(part.data));
 */
export function renderRepair({ state, attempt, error, next, stdout, status, restored, output }) {
  const row = el('div', 'repair');
  row.dataset.state = state;
  const label = {
    running: `Python attempt ${attempt}: running…`,
    failed: `Python attempt ${attempt} failed (${status})${next === 'repair' ? ' — repairing' : ' — giving up'}`,
    repairing: `Python attempt ${attempt}: writing a fix…`,
    success: `Python attempt ${attempt} succeeded`,
  }[state];
  row.append(el('strong', '', label));
  // The chat's interpreter had ended (idle, killed): python says how its state came back.
  if (restored) row.append(el('div', 'note restored', restored));
  if (state === 'running' && output) row.append(el('pre', 'attempt-live', output));
  if (state === 'failed') row.append(el('pre', 'attempt-error', error));
  if (state === 'success') row.append(el('pre', 'attempt-output', stdout || '(no output)'));
  return row;
}

/**
 * The python tool part with its attempts.
 *
 * @example
 * box.append(renderPythonCall(part, repairs.get(part.toolCallId) ?? []));
 */
export function renderPythonCall(part, repairs) {
  const box = el('div', 'python');
  const code = el('details', 'tool');
  code.append(el('summary', '', 'Python code'), el('pre', '', part.input?.code ?? ''));
  const rows = repairs.map(renderRepair);
  box.append(code, ...rows);
  if (part.output?.state === 'success') {
    // Under the attempt that succeeded, as the Next.js example shows them.
    const under = rows.findLast(row => row.dataset.state === 'success') ?? box;
    const results = renderResults(part.output);
    if (results.length > 0) {
      const list = el('div', 'cell-results');
      list.append(...results);
      under.append(list);
    }
    under.append(...renderArtifacts(part.output));
  }
  if (repairs.length === 0 && part.state === 'output-error')
    box.append(el('pre', 'error', part.errorText));
  return box;
}

// The figures no shown value drew already, files (offered as downloads, never rendered: the
// sandbox decides their contents) and the caps' notes.
function renderArtifacts(output) {
  const shown = shownImages(output);
  const nodes = [];
  for (const image of output.images ?? []) {
    if (image.mediaType !== 'image/png' || shown.has(image.name)) continue;
    nodes.push(renderFigure(image));
  }
  for (const file of output.files ?? []) {
    const name = file.name.split('/').pop();
    const link = el('a', 'download', `Download ${name} (${formatBytes(file.size)})`);
    link.href = file.url ?? `data:application/octet-stream;base64,${file.data}`;
    link.download = name;
    nodes.push(link);
  }
  for (const note of output.notes ?? []) nodes.push(el('div', 'note', note));
  return nodes;
}

function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  return bytes < 1024 * 1024
    ? `${(bytes / 1024).toFixed(1)} KB`
    : `${(bytes / 1048576).toFixed(1)} MB`;
}
