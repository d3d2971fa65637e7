// Draws a trace received by the test collector (the JSON that
// `TRACE_DUMP=file npx vitest run test/telemetry/examples-telemetry.test.ts` keeps): prints
// the span tree with durations and a few attributes per span, and writes a waterfall as SVG,
// the picture in docs/observability.md.
//
//   node test/telemetry/render-trace.ts trace.json docs/images/trace-chart-turn.svg
import { readFile, writeFile } from 'node:fs/promises';

type Span = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
};
type Row = { span: Span; depth: number };

// What each of ai-toolbelt's spans shows beside its name.
const SHOWN: Record<string, string[]> = {
  'retrieval tool-index': [
    'ai_toolbelt.selection.tools',
    'ai_toolbelt.selection.reasons',
    'ai_toolbelt.selection.cached',
  ],
  'ai_toolbelt.python.attempt': [
    'ai_toolbelt.python.attempt',
    'ai_toolbelt.python.status',
    'ai_toolbelt.python.error_type',
    'ai_toolbelt.repair.decision',
  ],
  'ai_toolbelt.sandbox.run': [
    'ai_toolbelt.sandbox.warm',
    'ai_toolbelt.sandbox.status',
    'ai_toolbelt.sandbox.exit_code',
    'ai_toolbelt.sandbox.images',
  ],
};
const shown = (span: Span): string => {
  const keys = span.name.startsWith('tools/call')
    ? ['ai_toolbelt.mcp.server', 'network.transport']
    : (SHOWN[span.name] ?? []);
  return keys
    .filter(key => span.attributes[key] !== undefined)
    .map(key => `${key.split('.').at(-1)}=${JSON.stringify(span.attributes[key])}`)
    .join(' ');
};

const [input, output] = process.argv.slice(2);
if (input === undefined) throw new Error('usage: render-trace.ts trace.json [out.svg]');
const spans = JSON.parse(await readFile(input, 'utf8')) as Span[];
const agent = spans.find(span => span.name.startsWith('invoke_agent '));
if (agent === undefined) throw new Error(`${input} holds no invoke_agent span`);
const turn = spans.filter(span => span.traceId === agent.traceId);
const children = new Map<string, Span[]>();
for (const span of turn) {
  const list = children.get(span.parentSpanId ?? '') ?? [];
  list.push(span);
  children.set(span.parentSpanId ?? '', list);
}
const rows: Row[] = [];
const walk = (span: Span, depth: number) => {
  rows.push({ span, depth });
  for (const child of (children.get(span.spanId) ?? []).sort((a, b) => a.startMs - b.startMs))
    walk(child, depth + 1);
};
walk(agent, 0);

const t0 = agent.startMs;
const ms = (x: number) => Math.round(x);
for (const { span, depth } of rows) {
  const at = `${ms(span.startMs - t0)}`.padStart(5);
  const took = `${ms(span.endMs - span.startMs)} ms`.padStart(8);
  console.log(`${at} ${took}  ${'  '.repeat(depth)}${span.name}  ${shown(span)}`.trimEnd());
}

if (output !== undefined) {
  const total = agent.endMs - agent.startMs;
  const [width, label, rowHeight, top] = [1100, 360, 22, 50];
  // Room on the right for the last bar's duration.
  const scale = (width - label - 80) / total;
  const color = (name: string) =>
    name.startsWith('ai_toolbelt.sandbox')
      ? '#e45756'
      : name.startsWith('ai_toolbelt.python')
        ? '#f58518'
        : name.startsWith('retrieval')
          ? '#54a24b'
          : name.startsWith('tools/')
            ? '#b279a2'
            : '#4c78a8';
  const escape = (text: string) =>
    text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const bars = rows.map(({ span, depth }, i) => {
    const y = top + i * rowHeight;
    const x = label + (span.startMs - t0) * scale;
    const w = Math.max(2, (span.endMs - span.startMs) * scale);
    const took = `${ms(span.endMs - span.startMs)} ms`;
    return [
      `<text x="${8 + depth * 14}" y="${y + 15}">${escape(span.name)}</text>`,
      `<rect x="${x.toFixed(1)}" y="${y + 3}" width="${w.toFixed(1)}" height="${rowHeight - 6}" rx="2" fill="${color(span.name)}"><title>${escape(`${span.name} ${took} ${shown(span)}`)}</title></rect>`,
      `<text x="${(x + w + 4).toFixed(1)}" y="${y + 15}" fill="#555">${took}</text>`,
    ].join('');
  });
  const height = top + rows.length * rowHeight + 10;
  const svg = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="ui-monospace, Menlo, monospace" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="8" y="18" font-weight="bold">One chat turn of the Hono example, exported over OTLP/HTTP (${ms(total)} ms)</text>`,
    `<text x="8" y="36" fill="#555">AI SDK spans blue; ai-toolbelt: selection green, MCP purple, python attempts orange, sandbox runs red</text>`,
    ...bars,
    '</svg>',
    '',
  ].join('\n');
  await writeFile(output, svg);
}
