// Plays the hostile output scenario (hostile-output-scenario.ts) in a chat page: the file's name
// shows and downloads without its right-to-left override, the 4,500-level JSON value shows, and
// the answer completes. Both examples' pages use the same markup.
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { expect } from 'vitest';
import {
  CLEANED_FILE_NAME,
  HOSTILE_OUTPUT_ANSWER,
  HOSTILE_OUTPUT_QUESTION,
} from './hostile-output-scenario.ts';
import { watchPage } from './page-watch.ts';

const STEP_TIMEOUT_MS = 60_000;

/**
 * Sends the question and checks the page: the download link's text and file name are the
 * cleaned name, the shown value's JSON is there, the answer arrives (no error in its place), and
 * the page reports no error or policy violation.
 *
 * @example
 * await playHostileOutput({ context, url, screenshot: 'test-results/e2e/hono-hostile-output.png' });
 */
export async function playHostileOutput({
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
  const watch = await watchPage(page);
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  await page.goto(url);
  await page.locator('#input').fill(HOSTILE_OUTPUT_QUESTION);
  await page.locator('#input').press('Enter');

  const download = page.locator('.python a.download');
  await download.waitFor();
  expect(await download.textContent()).toBe(`Download ${CLEANED_FILE_NAME} (2 B)`);
  expect(await download.getAttribute('download')).toBe(CLEANED_FILE_NAME);

  // The answer completes: the stream carried the cut value to its end.
  const answer = page.locator('.message.assistant .text', { hasText: HOSTILE_OUTPUT_ANSWER });
  const failed = page.locator('.message.assistant .error');
  await answer.or(failed).first().waitFor();
  expect(await failed.allTextContents()).toEqual([]);
  const json = page.locator('.cell-result[data-kind="json"] pre.json');
  expect(await json.count()).toBe(1);
  // Shown indented and cut by the page at 4,000 characters (64 levels take about that much, so
  // the note that ends them is checked on the stream in test/chat/hostile-output.test.ts).
  expect(await json.textContent()).toMatch(/^\[\n {2}\[\n {4}\[/);

  await mkdir(dirname(screenshot), { recursive: true });
  await page.screenshot({ path: screenshot, fullPage: true });
  expect(watch.problems()).toEqual([]);
  await page.close();
}
