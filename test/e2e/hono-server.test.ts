// Browser end to end: the Hono example as its own process (bundled MCP servers,
// real Docker + gVisor sandbox) against the fake model server, driven in
// Debian's Chromium.
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../fixtures/fake-openai/fake-openai-server.ts';
import { type AppProcess, startAppProcess } from './support/app-process.ts';
import { launchChromium } from './support/chromium.ts';
import { localModelPath } from '../helpers/local-model.ts';
import { describeE2E, describeWith } from './support/describe-e2e.ts';
import { playWeatherScenario } from './support/play-scenario.ts';
import { weatherScenario } from './support/weather-scenario.ts';
import {
  CSV_QUESTION,
  SALES_CSV,
  SUMMARY_CSV,
  csvFollowUpScenario,
} from './support/csv-scenario.ts';
import { playFollowUp } from './support/play-follow-up.ts';
import { playResultsScenario } from './support/play-results.ts';
import { resultsScenario } from './support/results-scenario.ts';
import { hostileOutputScenario } from './support/hostile-output-scenario.ts';
import { playHostileOutput } from './support/play-hostile-output.ts';
import { watchPage } from './support/page-watch.ts';
import { checkSecurityHeaders } from './support/security-checks.ts';

const root = join(import.meta.dirname, '..', '..');

describeE2E('hono-server example in a browser', () => {
  let fake: FakeOpenAI;
  let app: AppProcess;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ script: weatherScenario(), streamDelayMs: 5 });
    app = await startAppProcess({
      command: process.execPath,
      args: [join(root, 'examples/hono-server/src/main.ts')],
      env: { PORT: '0', OPENAI_API_KEY: 'test', OPENAI_BASE_URL: fake.baseURL },
      readyPattern: /Listening on (http:\/\/127\.0\.0\.1:\d+)/,
    });
  });
  afterAll(async () => {
    await app?.stop();
    await fake?.close();
  });

  it('shows the selected tools, the failed attempt, its repair and the answer', async () => {
    await using browser = await launchChromium();
    await playWeatherScenario({
      context: browser.context,
      url: app.ready[1]!,
      fake,
      screenshot: join(root, 'test-results/e2e/hono-server-chat.png'),
    });
    // As `npm start` runs it (which fetches the local model first): the local model embeds the
    // tools, before the key's server, which gets no embedding call.
    expect(app.output()).toContain(
      `[retrieval] hybrid, local all-MiniLM-L6-v2 (${localModelPath('all-MiniLM-L6-v2')})`,
    );
    expect(fake.requests.filter(request => request.api === 'embeddings')).toEqual([]);
  }, 120_000);

  it('gives python an attached CSV, shows the chart and offers the summary as a download; the next message charts the same DataFrame', async () => {
    fake.setScript(csvFollowUpScenario());
    const firstRequest = fake.requests.length;
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
    await page.locator('.message.user .attachment', { hasText: 'sales.csv' }).waitFor();

    const download = page.locator('.python a.download');
    await download.waitFor();
    expect(await download.textContent()).toBe('Download summary.csv (30 B)');
    expect(await download.getAttribute('download')).toBe('summary.csv');
    const href = (await download.getAttribute('href')) ?? '';
    expect(href.startsWith('data:application/octet-stream;base64,')).toBe(true);
    expect(Buffer.from(href.split(',')[1]!, 'base64').toString()).toBe(SUMMARY_CSV);
    await page.locator('.python .chart img').waitFor();
    expect(
      await page.locator('.repair[data-state="success"] .attempt-output').textContent(),
    ).toContain('north       9');
    await page.locator('.message.assistant .text', { hasText: 'ready to download' }).waitFor();

    // The model read where the file is, never its bytes (chat models take no CSV parts).
    const first = fake.requests.slice(firstRequest).find(request => request.api === 'chat')!;
    expect(first.lastUserText).toContain('python can read it at /tmp/inputs/sales.csv');
    expect(JSON.stringify(first.body)).not.toContain(
      Buffer.from(SALES_CSV.text).toString('base64'),
    );
    await page.screenshot({
      path: join(root, 'test-results/e2e/hono-server-csv.png'),
      fullPage: true,
    });

    // Turn 2, nothing attached: the chat's interpreter still holds `df` from turn 1.
    await playFollowUp(page);
    // Chat calls: turn 1's python and answer, then the follow-up's python and its answer. The
    // last one carries the follow-up's python result, so that is where a NameError would show.
    const calls = fake.requests.slice(firstRequest).filter(request => request.api === 'chat');
    expect(calls).toHaveLength(4);
    const afterFollowUp = calls.at(-1)!;
    expect(String(afterFollowUp.toolResults.at(-1)?.output)).toContain('tea');
    expect(JSON.stringify(afterFollowUp.body)).not.toContain('NameError');
    await page.screenshot({
      path: join(root, 'test-results/e2e/hono-server-follow-up.png'),
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
      screenshot: join(root, 'test-results/e2e/hono-server-results.png'),
    });
  }, 180_000);

  it('shows a file named with a right-to-left override by its cleaned name, and completes an answer whose JSON nests 4,500 levels', async () => {
    fake.setScript(hostileOutputScenario());
    await using browser = await launchChromium();
    await playHostileOutput({
      context: browser.context,
      url: app.ready[1]!,
      screenshot: join(root, 'test-results/e2e/hono-server-hostile-output.png'),
    });
  }, 180_000);

  it('sends a strict Content-Security-Policy, nosniff and DENY, and cannot be framed', async () => {
    await using browser = await launchChromium();
    await checkSecurityHeaders({ context: browser.context, url: app.ready[1]! });
  }, 60_000);
});

describeWith({ browser: true, sandbox: false }, 'hono-server example without a model', () => {
  let app: AppProcess;

  beforeAll(async () => {
    app = await startAppProcess({
      command: process.execPath,
      args: [join(root, 'examples/hono-server/src/main.ts')],
      env: { PORT: '0', OPENAI_API_KEY: '', PYTHON_SANDBOX: 'off' },
      readyPattern: /Listening on (http:\/\/127\.0\.0\.1:\d+)/,
    });
  });
  afterAll(() => app?.stop());

  it('says what to set, and a message gets that error instead of an answer', async () => {
    await using browser = await launchChromium();
    const page = await browser.context.newPage();
    await page.goto(app.ready[1]!);
    await page.locator('.model-missing').waitFor();
    expect(await page.locator('.model-missing').textContent()).toContain('Set OPENAI_API_KEY');
    expect(await page.locator('.python-disabled').textContent()).toContain('PYTHON_SANDBOX=off');
    await page.locator('#input').fill('Hello?');
    await page.locator('#send').click();
    const error = page.locator('.message.assistant .error');
    await error.waitFor();
    expect(await error.textContent()).toContain('No language model is configured');
    expect(await page.locator('.message.assistant .text').count()).toBe(0);
    await page.screenshot({
      path: join(root, 'test-results/e2e/hono-server-no-model.png'),
      fullPage: true,
    });
  }, 60_000);
});
