// The packed package in an app that already uses OpenTelemetry through an older API (1.9, as
// `@ai-sdk/otel` itself pins, with an SDK that accepts no newer API): ai-toolbelt uses the
// app's `@opentelemetry/api` (a peer dependency), so its spans go where the app registered its
// provider. A copy of its own at a newer minor would refuse the app's 1.9 registration
// (OpenTelemetry's API accepts only globals of its own minor or newer) and record nothing.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const version = async (name: string) =>
  (
    JSON.parse(await readFile(join(root, 'node_modules', name, 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;

// Registers the app's provider through API 1.9.1, then runs one selection through the middleware.
const SCRIPT = `
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { toolSelection } from 'ai-toolbelt';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
trace.setGlobalTracerProvider(provider);
const tool = name => ({ type: 'function', name, description: name.replace('_', ' '), inputSchema: { type: 'object' } });
const { middleware } = toolSelection({ topK: 1 });
const params = {
  prompt: [{ role: 'user', content: [{ type: 'text', text: 'weather in Oslo' }] }],
  tools: ['get_weather', 'send_email', 'create_ticket'].map(tool),
};
const next = await middleware.transformParams({ type: 'generate', params, model: undefined });
await provider.forceFlush();
const spans = exporter.getFinishedSpans();
console.log(JSON.stringify({
  offered: next.tools.map(t => t.name),
  spans: spans.map(s => [s.name, s.attributes['ai_toolbelt.selection.tools']]),
}));
`;

let app: string;

beforeAll(async () => {
  app = await mkdtemp(join(tmpdir(), 'ai-toolbelt-otel-app-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', app], {
    cwd: root,
  });
  const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
  await writeFile(
    join(app, 'package.json'),
    JSON.stringify({ name: 'otel-app', private: true, type: 'module' }),
  );
  await run(
    'npm',
    [
      ...['install', '--no-audit', '--no-fund', `./${filename}`],
      ...[`ai@${await version('ai')}`, `zod@${await version('zod')}`],
      ...['@opentelemetry/api@1.9.1', '@opentelemetry/sdk-trace-base@2.12.1'],
    ],
    { cwd: app },
  );
  await writeFile(join(app, 'app.mjs'), SCRIPT);
}, 300_000);
afterAll(async () => {
  if (app) await rm(app, { recursive: true, force: true });
});

it('records into the provider an app registered through OpenTelemetry API 1.9', async () => {
  const { stdout } = await run(process.execPath, ['app.mjs'], { cwd: app, timeout: 60_000 });
  expect(JSON.parse(stdout)).toEqual({
    offered: ['get_weather'],
    spans: [['retrieval tool-index', ['get_weather']]],
  });
  // One API copy in the app: the library's peer dependency resolved to the app's.
  const { stdout: tree } = await run('npm', ['ls', '--all', '--parseable', '@opentelemetry/api'], {
    cwd: app,
  });
  const copies = tree.split('\n').filter(line => line.endsWith('node_modules/@opentelemetry/api'));
  expect(copies).toEqual([join(app, 'node_modules/@opentelemetry/api')]);
}, 90_000);
