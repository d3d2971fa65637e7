import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { expect } from 'vitest';
import type { FakeOpenAI } from '../../fixtures/fake-openai/fake-openai-server.ts';
import type { Turn, TurnFunction } from '../../fixtures/fake-openai/script.ts';
import { watchPage } from './page-watch.ts';

const STEP_TIMEOUT_MS = 60_000;
export const NOTE_REQUEST = 'Save a note: buy milk';

/**
 * The fake model's turns for the sign-in scenario: it asks the user to
 * connect the notes server, then (asked again) saves a note, which makes the
 * notes server ask for a title and colour, then reports the server's answer.
 *
 * @example
 * await using fake = await startFakeOpenAI({ script: notesScenario() });
 */
export function notesScenario(): Array<Turn | TurnFunction> {
  return [
    { text: 'The notes server needs you to connect it first; then ask again.' },
    { toolCalls: [{ name: 'add_note', args: { text: 'buy milk' } }] },
    request => ({ text: `Done. ${request.toolResults.at(-1)?.output ?? ''}` }),
  ];
}

/**
 * Plays the sign-in scenario in a chat page as a person would: the answer
 * shows a "Connect notes" card; its link opens the notes server's sign-in
 * page in a new tab, where the user allows access; the chat then marks the
 * server connected; asked again, the model saves a note and the server's
 * question appears as a small form, which the user changes and sends. Both
 * examples' pages use the same markup.
 *
 * @example
 * await playSignInScenario({ context, url, fake, screenshot: 'test-results/e2e/hono-sign-in.png' });
 */
export async function playSignInScenario({
  context,
  url,
  fake,
  screenshot,
}: {
  /** A browser context to open the page in. */
  context: BrowserContext;
  /** The example's page. */
  url: string;
  /** The fake model server the example talks to. */
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
  await expect
    .poll(() => page.locator('.status').textContent(), { timeout: STEP_TIMEOUT_MS })
    .toContain('notes (per-user');

  await page.locator('#input').fill(NOTE_REQUEST);
  await page.locator('#input').press('Enter');
  const connect = page.locator('.message.assistant .mcp-auth .mcp-connect').first();
  await connect.waitFor();
  expect(await connect.textContent()).toBe('Connect notes');
  await page.locator('.message.assistant .text', { hasText: 'connect it first' }).waitFor();

  // Sign in on the notes server's own page, in the tab the link opens.
  const [signInTab] = await Promise.all([context.waitForEvent('page'), connect.click()]);
  // The app's callback page, which tells the chat, runs under the app's policy too.
  const tab = await watchPage(signInTab);
  await signInTab.locator('#login').waitFor();
  await signInTab.locator('#login').fill('ada');
  await signInTab.locator('#approve').click();
  await page.locator('.mcp-auth[data-state="connected"]').first().waitFor();
  expect(await page.locator('.mcp-auth').first().textContent()).toContain('Connected to notes');

  await page.locator('#input').fill(NOTE_REQUEST);
  await page.locator('#input').press('Enter');
  const form = page.locator('.mcp-elicitation[data-state="pending"] form');
  await form.waitFor();
  expect(await page.locator('.mcp-elicitation .mcp-message').last().textContent()).toContain(
    'Save "buy milk" to your notes?',
  );
  const title = form.locator('input[name="title"]');
  expect(await title.inputValue()).toBe('buy milk'); // the server's default
  expect(await form.locator('select[name="color"]').inputValue()).toBe('yellow');
  await title.fill('Groceries');
  await form.locator('.mcp-accept').click();
  await page.locator('.mcp-elicitation[data-state="accept"]').waitFor();

  const answer = page.locator('.message.assistant .text').last();
  await expect
    .poll(() => answer.textContent(), { timeout: STEP_TIMEOUT_MS })
    .toContain('Saved note "Groceries" (yellow) for ada.');

  // The first answer was made without the notes tools; the second with them.
  const calls = fake.requests.slice(firstRequest).filter(request => request.api === 'chat');
  expect(calls).toHaveLength(3);
  expect(calls[0]?.toolNames).not.toContain('add_note');
  expect(calls[1]?.toolNames).toContain('add_note');

  await mkdir(dirname(screenshot), { recursive: true });
  await page.screenshot({ path: screenshot, fullPage: true });
  expect(watch.problems()).toEqual([]);
  expect(tab.problems()).toEqual([]);
  await page.close();
}
