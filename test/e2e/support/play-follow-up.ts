// The second message of the CSV chat (see csv-scenario.ts), played in a page that already shows
// the first answer: nothing attached; python charts the DataFrame the first turn loaded.
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { CSV_FOLLOW_UP, PRODUCT_TOTALS } from './csv-scenario.ts';

/**
 * Sends the follow-up and checks the answer: a second chart, the totals per product printed from
 * `df` (no file read, no NameError), and no restore (the interpreter was live).
 *
 * @example
 * await playFollowUp(page);
 */
export async function playFollowUp(page: Page): Promise<void> {
  await page.locator('#input').fill(CSV_FOLLOW_UP);
  await page.locator('#input').press('Enter');
  await page.locator('.message.assistant .text', { hasText: 'second chart' }).waitFor();
  await expect.poll(() => page.locator('.python .chart img').count()).toBe(2);
  const outputs = await page
    .locator('.repair[data-state="success"] .attempt-output')
    .allTextContents();
  expect(outputs.at(-1)).toMatch(PRODUCT_TOTALS);
  expect(await page.locator('.repair[data-state="failed"]').count()).toBe(0);
  expect(await page.locator('.note.restored').count()).toBe(0);
}
