// Plays the results scenario (results-scenario.ts) in a chat page and checks what it shows. Both
// examples' pages use the same markup: `.python` per call, `.cell-result` per shown value,
// `.safe-html` for sanitised HTML, `[data-testid="chart-svg"]` for a chart drawn from data.
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { BrowserContext, Locator } from 'playwright-core';
import { expect } from 'vitest';
import {
  HOSTILE_IMG,
  HOSTILE_SCRIPT,
  RESULTS_ANSWER,
  RESULTS_QUESTION,
} from './results-scenario.ts';
import { watchPage } from './page-watch.ts';

const STEP_TIMEOUT_MS = 60_000;

/**
 * Sends the question and checks: the running cell's output streams in; `df.describe()` shows as a
 * table; the line chart is drawn as SVG from its data (title, legend, one polyline through three
 * points placed as 2, 4, 8 are), with the PNG kept; the hostile HTML never runs, and what the
 * sanitiser keeps (`<b>bold</b>`, the DataFrame's escaped strings) shows.
 *
 * @example
 * await playResultsScenario({ context, url, screenshot: 'test-results/e2e/hono-results.png' });
 */
export async function playResultsScenario({
  context,
  url,
  screenshot,
}: {
  /** A browser context to open the page in. */
  context: BrowserContext;
  /** The example's page. */
  url: string;
  /** Where the final screenshot goes. */
  screenshot: string;
}): Promise<void> {
  const page = await context.newPage();
  // Console errors, page errors and Content-Security-Policy violations.
  const watch = await watchPage(page);
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  await page.goto(url);
  await page.locator('#input').fill(RESULTS_QUESTION);
  await page.locator('#input').press('Enter');

  // Streamed while the first cell sleeps between its prints.
  await page
    .locator('.repair[data-state="running"] .attempt-live', { hasText: 'tick 0' })
    .waitFor();

  await page.locator('.message.assistant .text', { hasText: RESULTS_ANSWER }).waitFor();
  const calls = page.locator('.message.assistant .python');
  expect(await calls.count()).toBe(4);
  expect(await calls.nth(0).locator('.attempt-output').textContent()).toMatch(
    /tick 0\s+tick 1\s+tick 2/,
  );
  expect(await page.locator('.repair[data-state="running"]').count()).toBe(0);

  await checkDescribeTable(calls.nth(1));
  await checkLineChart(calls.nth(2));
  await checkHostileHtml(calls.nth(3));

  // Nothing ran, on any element, however long the page had to load the hostile img.
  await page.waitForTimeout(500);
  expect(await page.evaluate(() => (window as { __pwned?: unknown }).__pwned)).toBeUndefined();
  expect(await page.locator('#messages script').count()).toBe(0);
  expect(await page.locator('img[onerror]').count()).toBe(0);
  // The only images in the chat are the figures' PNGs (one here).
  const sources = await page
    .locator('#messages img')
    .evaluateAll(images => images.map(image => image.getAttribute('src') ?? ''));
  expect(sources).toHaveLength(1);
  expect(sources[0]).toMatch(/^data:image\/png;base64,/);

  await mkdir(dirname(screenshot), { recursive: true });
  await page.screenshot({ path: screenshot, fullPage: true });
  // The one thing the policy refused: the hostile img's handler, which the browser checks while
  // it parses the HTML for DOMPurify (which then drops the img). Nothing else.
  const hostile = (problem: string) =>
    problem === 'CSP violation: script-src-attr blocked inline: window.__pwned=1' ||
    problem.startsWith('console: Executing inline event handler violates');
  expect(watch.problems().filter(problem => !hostile(problem))).toEqual([]);
  expect(watch.problems()).toContain(
    'CSP violation: script-src-attr blocked inline: window.__pwned=1',
  );
  await page.close();
}

// df.describe(): the main result, an HTML table with describe's rows, stripped of pandas' <style>
// and of every attribute (class, border).
async function checkDescribeTable(call: Locator): Promise<void> {
  const result = call.locator('.cell-result');
  expect(await result.count()).toBe(1);
  expect(await result.getAttribute('data-main')).toBe('true');
  expect(await result.locator('.cell-label').textContent()).toBe('Out:');
  const table = result.locator('.safe-html table');
  const rows = await table.locator('tbody th').allTextContents();
  expect(rows).toEqual(['count', 'mean', 'std', 'min', '25%', '50%', '75%', 'max']);
  expect(await table.locator('thead th').allTextContents()).toContain('v');
  const mean = await table.locator('tbody tr', { hasText: 'mean' }).locator('td').textContent();
  expect(Number(mean)).toBe(1.5);
  expect(
    await result.locator('.safe-html style, .safe-html [class], .safe-html [style]').count(),
  ).toBe(0);
}

// plt.plot + plt.title: an SVG drawn from the chart data, the PNG kept below it, and the cell's
// last expression (plt.title's Text) as text.
async function checkLineChart(call: Locator): Promise<void> {
  const chart = call.locator('[data-testid="chart-svg"]');
  expect(await chart.count()).toBe(1);
  expect(await chart.getAttribute('data-chart-type')).toBe('line');
  expect(await chart.locator('.chart-title').textContent()).toBe('Growth');
  expect(await call.locator('.chart-legend').textContent()).toBe('growth');
  const lines = chart.locator('polyline.chart-line');
  expect(await lines.count()).toBe(1);
  const points = ((await lines.getAttribute('points')) ?? '')
    .trim()
    .split(/\s+/)
    .map(pair => pair.split(',').map(Number) as [number, number]);
  expect(points).toHaveLength(3);
  // Placed from the data: x = 1, 2, 3 evenly apart; y = 2, 4, 8, so the second rise (in pixels,
  // upwards) is twice the first.
  const [a, b, c] = points as [[number, number], [number, number], [number, number]];
  expect(b[0] - a[0]).toBeCloseTo(c[0] - b[0], 0);
  expect(a[1] - b[1]).toBeGreaterThan(0);
  expect((b[1] - c[1]) / (a[1] - b[1])).toBeCloseTo(2, 1);
  await call.locator('.chart img').waitFor();
  const out = call.locator('.cell-result[data-main="true"]');
  expect(await out.getAttribute('data-kind')).toBe('text');
  expect(await out.locator('pre').textContent()).toContain("'Growth'");
}

// display(hostile) then HTML(...): two shown values in order; the DataFrame's strings as text,
// the raw HTML down to its <b>.
async function checkHostileHtml(call: Locator): Promise<void> {
  const results = call.locator('.cell-result');
  expect(await results.count()).toBe(2);
  const displayed = results.nth(0);
  expect(await displayed.getAttribute('data-main')).toBe('false');
  expect(await displayed.locator('.cell-label').textContent()).toBe('Displayed:');
  expect(await displayed.locator('.safe-html td').allTextContents()).toEqual([
    HOSTILE_IMG,
    HOSTILE_SCRIPT,
  ]);
  const main = results.nth(1);
  expect(await main.getAttribute('data-main')).toBe('true');
  expect(await main.locator('.safe-html b').textContent()).toBe('bold');
  expect(await main.locator('.safe-html').evaluate(box => box.innerHTML)).toBe('<b>bold</b>');
}
