// Browser end to end: the Next.js example built with `next build` and served by
// `next start` (bundled MCP servers, real Docker + gVisor sandbox) against the
// fake model server, driven in Debian's Chromium.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listSandboxContainers } from '../../src/internal.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fixtures/fake-openai/fake-openai-server.ts';
import type { Script } from '../fixtures/fake-openai/script.ts';
import { localModelPath } from '../helpers/local-model.ts';
import { type AppProcess, startAppProcess } from './support/app-process.ts';
import { launchChromium } from './support/chromium.ts';
import { describeE2E } from './support/describe-e2e.ts';
import { CSV_QUESTION, SALES_CSV, csvFollowUpScenario } from './support/csv-scenario.ts';
import { playFollowUp } from './support/play-follow-up.ts';
import { playResultsScenario } from './support/play-results.ts';
import { resultsScenario } from './support/results-scenario.ts';
import { hostileOutputScenario } from './support/hostile-output-scenario.ts';
import { playHostileOutput } from './support/play-hostile-output.ts';
import { watchPage } from './support/page-watch.ts';
import { checkSecurityHeaders } from './support/security-checks.ts';
import { playWeatherScenario } from './support/play-scenario.ts';
import { notesScenario, playSignInScenario } from './support/play-sign-in.ts';
import { weatherScenario } from './support/weather-scenario.ts';

const root = join(import.meta.dirname, '..', '..');
type Turns = Extract<Script, unknown[]>;
const appDir = join(root, 'examples/next-app');
const nextBin = createRequire(join(appDir, 'package.json')).resolve('next/dist/bin/next');
// As `npm start` runs it: Next leaves SIGTERM to instrumentation.ts, which closes the toolbelt.
const env = { NEXT_TELEMETRY_DISABLED: '1', NEXT_MANUAL_SIG_HANDLE: 'true' };

describeE2E('next-app example in a browser', () => {
  let fake: FakeOpenAI;
  let app: AppProcess;
  let buildOutput: string;

  beforeAll(async () => {
    // A production build, as a user would deploy it (about a minute on 2 cores).
    const build = await promisify(execFile)(process.execPath, [nextBin, 'build'], {
      cwd: appDir,
      env: { ...process.env, ...env },
      maxBuffer: 16 * 1024 * 1024,
    });
    buildOutput = `${build.stdout}\n${build.stderr}`;
    // The weather conversation, then the sign-in one (the tests below run in this order).
    fake = await startFakeOpenAI({
      script: [...(weatherScenario() as Turns), ...notesScenario()],
      streamDelayMs: 5,
    });
    const port = await freePort();
    app = await startAppProcess({
      command: process.execPath,
      args: [nextBin, 'start', '--hostname', '127.0.0.1', '--port', String(port)],
      cwd: appDir,
      env: { ...env, OPENAI_API_KEY: 'test', OPENAI_BASE_URL: fake.baseURL },
      readyPattern: /Ready in/,
    });
    app.ready[1] = `http://127.0.0.1:${port}/`;
  }, 300_000);
  afterAll(async () => {
    await app?.stop();
    await fake?.close();
  });

  it('opens the toolbelt at start with the local embedding model, from the library in node_modules', async () => {
    // `npm start` opens the toolbelt at once (instrumentation.ts) and says which retrieval it
    // uses: the local model's worker thread starts from ai-toolbelt's dist/, which bundling the
    // library would break (lib/embedder.ts loads it unbundled). Nothing asked the key's server.
    await expect
      .poll(app.output, { timeout: 30_000 })
      .toContain(
        `[retrieval] hybrid, local all-MiniLM-L6-v2 (${localModelPath('all-MiniLM-L6-v2')})`,
      );
    expect(app.output()).not.toContain('[retrieval] lexical');
    expect(fake.requests.filter(request => request.api === 'embeddings')).toEqual([]);
    // The build bundled nothing of the local model (no "traces the whole project" warning).
    expect(buildOutput).not.toMatch(/local-embedding|Dynamic filesystem access/);
  }, 60_000);

  it('renders the python tool part as a timeline: failed attempt, repair, answer', async () => {
    await using browser = await launchChromium();
    await playWeatherScenario({
      context: browser.context,
      url: app.ready[1]!,
      fake,
      screenshot: join(root, 'test-results/e2e/next-app-chat.png'),
    });
    expect(fake.requests.filter(request => request.api === 'embeddings')).toEqual([]);
  }, 120_000);

  it('connects the bundled notes server from the chat and answers its form', async () => {
    await using browser = await launchChromium();
    await playSignInScenario({
      context: browser.context,
      url: app.ready[1]!,
      fake,
      screenshot: join(root, 'test-results/e2e/next-app-sign-in.png'),
    });
  }, 120_000);

  it("keeps the chat's python interpreter: a CSV in turn 1, a chart of its DataFrame in turn 2", async () => {
    fake.setScript(csvFollowUpScenario());
    await using browser = await launchChromium();
    const page = await browser.context.newPage();
    const watch = await watchPage(page);
    page.setDefaultTimeout(60_000);
    await page.goto(app.ready[1]!);
    await page.locator('#attach').setInputFiles({
      name: SALES_CSV.name,
      mimeType: SALES_CSV.mimeType,
      buffer: Buffer.from(SALES_CSV.text),
    });
    await page.locator('#input').fill(CSV_QUESTION);
    await page.locator('#input').press('Enter');
    await page.locator('.message.assistant .text', { hasText: 'ready to download' }).waitFor();
    await page.locator('.python .chart img').first().waitFor();
    await playFollowUp(page);
    await page.screenshot({
      path: join(root, 'test-results/e2e/next-app-follow-up.png'),
      fullPage: true,
    });
    expect(watch.problems()).toEqual([]);
  }, 180_000);

  it('shows what python cells showed: live output, a describe() table, a chart drawn from its data, hostile HTML sanitised', async () => {
    fake.setScript(resultsScenario());
    await using browser = await launchChromium();
    await playResultsScenario({
      context: browser.context,
      url: app.ready[1]!,
      screenshot: join(root, 'test-results/e2e/next-app-results.png'),
    });
  }, 180_000);

  it('shows a file named with a right-to-left override by its cleaned name, and completes an answer whose JSON nests 4,500 levels', async () => {
    fake.setScript(hostileOutputScenario());
    await using browser = await launchChromium();
    await playHostileOutput({
      context: browser.context,
      url: app.ready[1]!,
      screenshot: join(root, 'test-results/e2e/next-app-hostile-output.png'),
    });
  }, 180_000);

  it('sends a strict Content-Security-Policy with a nonce, nosniff and DENY, and cannot be framed', async () => {
    await using browser = await launchChromium();
    await checkSecurityHeaders({ context: browser.context, url: app.ready[1]! });
  }, 60_000);

  it('refuses an oversized body with 413 and an over-long message with 400', async () => {
    const url = new URL('api/chat', app.ready[1]!);
    const message = (text: string) =>
      JSON.stringify({ messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text }] }] });
    const huge = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: message('x'.repeat(20e6)),
    });
    expect(huge.status).toBe(413);
    expect((await huge.json()).error).toContain('larger than 12 MiB');
    const long = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: message('x'.repeat(20_001)),
    });
    expect(long.status).toBe(400);
    expect((await long.json()).error).toContain('at most 20000');
  });

  it('ranks tools in an Edge function that imports the root entry', async () => {
    // `next build` made /api/select an Edge function (the Node routes are not in this manifest)
    // and bundled the root entry for it without a Node-module warning.
    const manifest = JSON.parse(
      await readFile(join(appDir, '.next/server/middleware-manifest.json'), 'utf8'),
    ) as { functions: Record<string, unknown> };
    expect(Object.keys(manifest.functions)).toEqual(['/api/select/route']);
    expect(buildOutput).toMatch(/\/api\/select/);
    expect(buildOutput).not.toMatch(/Node\.js (module|API) is (loaded|used)/);

    const select = (query: string) => fetch(new URL(`api/select?${query}`, app.ready[1]!));
    const response = await select('q=Book+a+meeting+with+Ana+on+Friday&k=2');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      query: 'Book a meeting with Ana on Friday',
      retrieval: 'lexical',
      tools: [
        { name: 'create_event', server: 'calendar', score: expect.any(Number) },
        { name: 'list_events', server: 'calendar', score: expect.any(Number) },
      ],
    });
    const rain = await (await select('q=Will+it+rain+in+Oslo+tomorrow%3F')).json();
    expect(rain.tools[0]).toMatchObject({ name: 'forecast', server: 'weather' });
    const missing = await select('k=2');
    expect(missing.status).toBe(400);
    expect((await missing.json()).error).toContain('?q=');
  });

  it('answers only its own host and origin, and anonymous callbacks mint no user', async () => {
    const url = app.ready[1]!;
    // DNS rebinding: the attacker's name in Host (node:http sends it as given; fetch sets its own).
    for (const path of ['', 'api/select?q=weather'])
      expect(await statusWithHost(new URL(path, url), 'rebind.attacker.test')).toBe(421);
    expect(
      await statusWithHost(new URL('api/select?q=weather', url), `localhost:${new URL(url).port}`),
    ).toBe(200);
    const crossSite = await fetch(new URL('api/chat', url), {
      method: 'POST',
      headers: { origin: 'http://evil.test', 'content-type': 'text/plain' },
      body: JSON.stringify({
        messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
      }),
    });
    expect(crossSite.status).toBe(403);
    // A browser that never loaded the page gets no user id, so nothing is created for it.
    const callbacks = await Promise.all(
      Array.from({ length: 50 }, () => fetch(new URL('api/mcp/callback?code=x', url))),
    );
    expect(callbacks.filter(response => response.headers.has('set-cookie'))).toEqual([]);
    expect(callbacks.map(response => response.status)).toEqual(callbacks.map(() => 400));
    expect(await callbacks[0]!.text()).toContain('no session');
    // The page is what hands the id out.
    const page = await fetch(url);
    // The id and its signature: only ids the app signed are accepted back.
    expect(page.headers.get('set-cookie')).toMatch(/^uid=[\w-]{36}\.[\w-]{43};/);
  });

  it('ends its MCP servers and removes its sandbox containers on SIGTERM', async () => {
    const pid = app.child.pid!;
    // The warm pool refills after each run; wait until it holds a container to clean up.
    await expect
      .poll(() => listSandboxContainers({ docker: new Docker(), pid }), { timeout: 15_000 })
      .not.toEqual([]);
    await app.stop();
    expect(app.child.exitCode).toBe(0);
    expect(await listSandboxContainers({ docker: new Docker(), pid })).toEqual([]);
  }, 30_000);
});

// `next start` needs a port number; ask the OS for a free one.
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise(resolve => server.close(resolve));
  return port;
}

// GET `url` with this Host header.
function statusWithHost(url: URL, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request(url, { headers: { host } }, response => {
      response.resume();
      resolve(response.statusCode!);
    })
      .on('error', reject)
      .end();
  });
}
