import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { expect } from 'vitest';
import type { FakeOpenAI } from '../../fixtures/fake-openai/fake-openai-server.ts';
import {
  CHART_SIZE,
  EXPECTED_AVERAGE,
  PYTHON_ERROR,
  QUESTION,
  SELECTED_TOOL,
} from './weather-scenario.ts';
import { watchPage } from './page-watch.ts';

const STEP_TIMEOUT_MS = 60_000;

/**
 * Plays the weather scenario in a chat page as a person would (types the
 * question, presses Enter) and checks what the page shows: the selected
 * tools, the failed python attempt with its trimmed error, the successful
 * repair and the final answer. Both examples' pages use the same markup.
 *
 * @example
 * await playWeatherScenario({ context, url, fake, screenshot: 'test-results/e2e/hono-chat.png' });
 */
export async function playWeatherScenario({
  context,
  url,
  fake,
  screenshot,
}: {
  /** A browser context to open the page in. */
  context: BrowserContext;
  /** The example's page. */
  url: string;
  /** The fake model server the example talks to (for what reached the model). */
  fake: FakeOpenAI;
  /** Where the final screenshot goes. */
  screenshot: string;
}): Promise<void> {
  const page = await context.newPage();
  // Console errors, page errors and Content-Security-Policy violations.
  const watch = await watchPage(page);
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  const firstRequest = fake.requests.length;

  await page.goto(url);
  const status = page.locator('.status');
  await expect
    .poll(() => status.textContent(), { timeout: STEP_TIMEOUT_MS })
    .toContain('weather (ready, 5 tools)');
  expect(await status.textContent()).not.toContain('Python tool disabled');
  expect(await page.locator('.model-missing').count()).toBe(0);

  await page.locator('#input').fill(QUESTION);
  await page.locator('#input').press('Enter');
  await page.locator('.message.user', { hasText: QUESTION }).waitFor();

  // The first model call's tools: retrieval's top 3 plus the pinned python tool, not all 11.
  const selection = page.locator('.message.assistant .tool-selection').first();
  await selection.waitFor();
  const chips = await selection.locator('.chip').allTextContents();
  expect(chips).toContain(SELECTED_TOOL);
  expect(chips).toContain('python');
  expect(chips).toHaveLength(4);
  expect(await selection.textContent()).toContain('7 left out');
  // The example embeds its tools (with the local model, or the fake server's /v1/embeddings).
  expect(await selection.getAttribute('data-retrieval')).toBe('hybrid');
  expect(await selection.textContent()).toContain('Step 1 (hybrid)');

  const failed = page.locator('.repair[data-state="failed"]').first();
  await failed.waitFor();
  const error = (await failed.locator('.attempt-error').textContent()) ?? '';
  expect(error).toContain(PYTHON_ERROR);
  expect(error).toContain('len(high)'); // the failing line, from the real sandbox's traceback
  expect(error.length).toBeLessThan(1_000); // trimmed, not the raw stderr

  const success = page.locator('.repair[data-state="success"]').first();
  await success.waitFor();
  expect(await success.locator('.attempt-output').textContent()).toContain(EXPECTED_AVERAGE);
  expect(await success.textContent()).toContain('attempt 2');

  // The repaired run's chart, shown in the chat as the sandbox rendered it.
  const chart = page.locator('.python .chart img').first();
  await chart.waitFor();
  // Decoded by the browser at the size the sandbox reported: a real PNG, about 6x3 inches at 100 dpi.
  const size = () =>
    chart.evaluate(img => {
      const image = img as HTMLImageElement;
      return {
        natural: [image.naturalWidth, image.naturalHeight],
        reported: [Number(image.getAttribute('width')), Number(image.getAttribute('height'))],
      };
    });
  await expect.poll(async () => (await size()).natural[0]).toBeGreaterThan(0);
  const { natural, reported } = await size();
  expect(natural).toEqual(reported);
  expect(Math.abs(natural[0]! - CHART_SIZE.width)).toBeLessThan(CHART_SIZE.width * 0.15);
  expect(Math.abs(natural[1]! - CHART_SIZE.height)).toBeLessThan(CHART_SIZE.height * 0.2);
  expect(await page.locator('.python .chart img').count()).toBe(1);

  const answer = page.locator('.message.assistant .text').last();
  await expect
    .poll(() => answer.textContent(), { timeout: STEP_TIMEOUT_MS })
    .toContain(`was ${EXPECTED_AVERAGE} °C`);

  // One row per attempt, none left looking unfinished once the answer is in.
  expect(await page.locator('.repair[data-state="failed"]').count()).toBe(1);
  expect(await page.locator('.repair[data-state="success"]').count()).toBe(1);
  expect(await page.locator('.repair[data-state="running"]').count()).toBe(0);
  expect(await failed.textContent()).toContain('attempt 1');

  // What reached the model: the narrowed tool list, and the trimmed error before the fix.
  const calls = fake.requests.slice(firstRequest).filter(request => request.api === 'chat');
  expect(calls).toHaveLength(4);
  expect(calls[0]?.toolNames).toHaveLength(4);
  expect(calls[0]?.toolNames).toContain(SELECTED_TOOL);
  expect(calls[2]?.toolResults.at(-1)?.output).toContain(PYTHON_ERROR);
  // A Chat Completions model gets a note about the chart, not its base64.
  expect(calls[3]?.toolResults.at(-1)?.output).toMatch(/figure-1\.png \(\d+x\d+ PNG\)/);
  expect(JSON.stringify(calls[3]?.body)).not.toContain('iVBORw0KGgo');

  await mkdir(dirname(screenshot), { recursive: true });
  await page.screenshot({ path: screenshot, fullPage: true });
  expect(watch.problems()).toEqual([]);
  await page.close();
}
