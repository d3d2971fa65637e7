import type { Page } from 'playwright-core';

/**
 * Collects what a page reports going wrong from the moment it is watched: console errors, uncaught
 * errors, and every Content-Security-Policy violation (the `securitypolicyviolation` event, caught
 * by a script Chromium injects outside the page's policy; with the blocked code's start where the
 * policy says 'report-sample'). An example under its policy must report none of them, except
 * what it blocks of hostile markup from the sandbox.
 *
 * @example
 * const watch = await watchPage(page);
 * await page.goto(url);
 * expect(watch.problems()).toEqual([]);
 */
export async function watchPage(page: Page): Promise<{ problems: () => string[] }> {
  const problems: string[] = [];
  page.on('console', message => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', error => problems.push(`page error: ${error.message}`));
  await page.exposeBinding('__reportViolation', (_source, violation: string) => {
    problems.push(`CSP violation: ${violation}`);
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', event => {
      const report = (window as unknown as { __reportViolation: (v: string) => void })
        .__reportViolation;
      const sample = event.sample ? `: ${event.sample}` : '';
      void report(`${event.effectiveDirective} blocked ${event.blockedURI || 'inline'}${sample}`);
    });
  });
  return { problems: () => [...problems] };
}
