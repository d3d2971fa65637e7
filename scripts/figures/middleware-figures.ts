// Figures of bench:middleware and bench:mcp.
import { measuredOn, ms, num, pct, ratio, table } from './format.ts';
import type { Results, Row } from './results.ts';
import type { Renderers } from './update-docs.ts';

const stability = (results: Results, set: string, mode: string): Row =>
  results.row('middleware', { bench: 'stability', set, stability: mode });
const step = (results: Results, tools: number, retrieval: string): Row =>
  results.row('middleware', { bench: 'step-time', tools, retrieval });
const tokens = (results: Results, api: string, catalog: number): Row =>
  results.row('middleware', { bench: 'tool-tokens', api, catalog });
const n = (row: Row, field: string): number => {
  const value = row[field];
  if (typeof value !== 'number') throw new Error(`${field} is ${JSON.stringify(value)}`);
  return value;
};

function stepParagraph(results: Results): string {
  const lexical1k = step(results, 1000, 'lexical');
  const lexical10k = step(results, 10000, 'lexical');
  const hybrid1k = step(results, 1000, 'hybrid');
  const hybrid10k = step(results, 10000, 'hybrid');
  const chat200 = tokens(results, 'chat completions', 200);
  const chatAll = results
    .rows('middleware', { bench: 'tool-tokens', api: 'chat completions' })
    .find(row => row.catalog !== 200)!;
  const resp200 = tokens(results, 'responses', 200);
  const respAll = tokens(results, 'responses', n(chatAll, 'catalog'));
  return [
    `**Middleware** (\`npm run bench:middleware\`, ${n(lexical1k, 'turns')} turns of ${n(lexical1k, 'stepsPerTurn')} steps, medians): a turn's first model call (retrieval; with a dense channel: the query embedded`,
    `over HTTP by the local fake OpenAI-compatible server, stand-in vectors of 1,536-d, then fusion) takes ${ms(n(lexical1k, 'firstStepMs'))} at 1,000 tools and`,
    `${ms(n(lexical10k, 'firstStepMs'))} at 10,000 lexical, ${ms(n(hybrid1k, 'firstStepMs'))} / ${ms(n(hybrid10k, 'firstStepMs'))} with the dense channel (the HTTP round trip included). A later step of the`,
    `turn, with the model's tool call and its result appended as \`generateText\` does (the selection read back from`,
    `the marker on that call), takes ${ms(n(lexical1k, 'laterStepMs'))} / ${ms(n(lexical10k, 'laterStepMs'))} lexical and ${ms(n(hybrid1k, 'laterStepMs'))} / ${ms(n(hybrid10k, 'laterStepMs'))} with it; ${num(n(hybrid1k, 'embeddingRequestsPerTurn'))} embedding request per turn.`,
    `Tool-definition tokens per call (o200k) in the request body each API is sent, on the BFCL catalog: chat`,
    `completions ${num(n(chat200, 'tokensAll'))} for all 200 tools vs ${num(n(chat200, 'tokensSelected'))} for the top ${n(chat200, 'topK')} (${pct(n(chat200, 'reduction'), 1)} fewer), ${num(n(chatAll, 'tokensAll'))} for all`,
    `${num(n(chatAll, 'catalog'))} vs ${num(n(chatAll, 'tokensSelected'))} (${pct(n(chatAll, 'reduction'), 1)}); the Responses API ${num(n(resp200, 'tokensAll'))} vs ${num(n(resp200, 'tokensSelected'))} and ${num(n(respAll, 'tokensAll'))} vs ${num(n(respAll, 'tokensSelected'))}.`,
    '',
    measuredOn(results.file('middleware').machine, 'npm run bench:middleware'),
  ].join('\n');
}

function mcpTable(results: Results): string {
  const rows = ['stdio', 'http'].map(transport => {
    const row = results.row('mcp', { transport });
    return [
      transport === 'http' ? 'HTTP' : 'stdio',
      ms(n(row, 'discoverMs')),
      ms(n(row, 'baselineDiscoverMs')),
      `${ms(n(row, 'listChangedToIndexMs'))} / ${ms(n(row, 'listChangedToIndexNoDebounceMs'))}`,
    ];
  });
  const stdio = results.row('mcp', { transport: 'stdio' });
  return [
    table(
      [
        'transport',
        `discover ${num(n(stdio, 'tools'))} tools`,
        'bare SDK paging (baseline)',
        `list_changed → index updated (${n(stdio, 'debounceMs')} ms debounce / none)`,
      ],
      rows,
    ),
    '',
    `Medians of ${n(stdio, 'runs')} discoveries and ${n(stdio, 'changes')} changes. ${measuredOn(results.file('mcp').machine, 'npm run bench:mcp')}`,
  ].join('\n');
}

function mcpSentence(results: Results): string {
  const stdio = results.row('mcp', { transport: 'stdio' });
  const http = results.row('mcp', { transport: 'http' });
  return [
    `**MCP** (\`npm run bench:mcp\`): discovering ${num(n(stdio, 'tools'))} tools served ${n(stdio, 'pageSize')} per page takes ${ms(n(stdio, 'discoverMs'))} over stdio`,
    `(spawn included) and ${ms(n(http, 'discoverMs'))} over HTTP; a \`list_changed\` reaches the index in ${ms(n(stdio, 'listChangedToIndexMs'))} / ${ms(n(http, 'listChangedToIndexMs'))} (${ms(n(stdio, 'debounceMs'))} of`,
    `it is the debounce). ${measuredOn(results.file('mcp').machine, 'npm run bench:mcp')}`,
  ].join('\n');
}

function telemetryTable(results: Results): string {
  const rows = results.rows('middleware', { bench: 'telemetry' });
  const off = rows.reduce(
    (sum, row) => sum + n(row, 'tracersHandedOutOff') + n(row, 'spansStartedOff'),
    0,
  );
  return [
    table(
      ['tools', 'first step off / on', 'later step off / on', 'spans per model call on'],
      rows.map(row => [
        num(n(row, 'tools')),
        `${num(n(row, 'offFirstStepMs'), 2)} / ${num(n(row, 'onFirstStepMs'), 2)} ms`,
        `${num(n(row, 'offCachedStepMs'), 2)} / ${num(n(row, 'onCachedStepMs'), 2)} ms`,
        num(n(row, 'spansPerCallOn'), 1),
      ]),
    ),
    '',
    `Tracers handed out and spans started with telemetry off, over every call: ${num(off)}. ${measuredOn(results.file('middleware').machine, 'npm run bench:middleware')}`,
  ].join('\n');
}

function warmStartTable(results: Results): string {
  const rows = results.rows('middleware', { bench: 'warm-start' });
  if (rows.length === 0) throw new Error('bench:middleware has no warm-start rows');
  return [
    table(
      [
        'tools',
        'load cold / warm',
        'first search cold / warm',
        'searches 901-1,000 cold / warm',
        'warm / cold',
        'warm background ended by search',
      ],
      rows.map(row => [
        num(n(row, 'tools')),
        `${ms(n(row, 'coldLoadMs'))} / ${ms(n(row, 'warmLoadMs'))}`,
        `${ms(n(row, 'coldFirstSearchMs'))} / ${ms(n(row, 'warmFirstSearchMs'))}`,
        `${ms(n(row, 'coldSearch901to1000Ms'))} / ${ms(n(row, 'warmSearch901to1000Ms'))}`,
        ratio(n(row, 'warmOverCold')),
        num(n(row, 'warmBackgroundDoneBySearch')),
      ]),
    ),
    '',
    `An index with a dense channel built from the model (cold: stand-in vectors of 1,536-d from the local fake OpenAI-compatible server) and one loaded from the snapshots an earlier process left in a store folder (warm), each in its own process (${num(n(rows[0]!, 'processes'))} of each, alternating; medians), answer the same ${num(n(rows[0]!, 'searches'))} searches, each after a turn of the event loop; a query is embedded over HTTP the first time, from memory after. "Load" is the upsert; searches 901-1,000 are their median. ${measuredOn(results.file('middleware').machine, 'npm run bench:middleware')}`,
  ].join('\n');
}

export const middlewareFigures: Renderers = {
  blocks: {
    'middleware-warm-start': warmStartTable,
    'middleware-steps': stepParagraph,
    'mcp-table': mcpTable,
    'mcp-summary': mcpSentence,
    'telemetry-table': telemetryTable,
  },
  values: Object.fromEntries(
    ['dev', 'dev-multi'].flatMap(set => [
      ...['fresh', 'sticky'].map(mode => [
        `stability-${set}-${mode}`,
        (results: Results) => pct(n(stability(results, set, mode), 'identicalToolListRate')),
      ]),
      [
        `stability-${set}-gold`,
        (results: Results) => pct(n(stability(results, set, 'sticky'), 'goldRecall'), 1),
      ],
    ]),
  ),
};
