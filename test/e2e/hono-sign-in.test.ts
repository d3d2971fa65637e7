// Browser end to end: the Hono example's "Connect" step for its bundled notes
// server (an MCP server with its own OAuth server) and an elicitation form,
// against the fake model, in Debian's Chromium. No sandbox needed.
import { join } from 'node:path';
import { afterAll, beforeAll, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../fixtures/fake-openai/fake-openai-server.ts';
import { type AppProcess, startAppProcess } from './support/app-process.ts';
import { launchChromium } from './support/chromium.ts';
import { describeWith } from './support/describe-e2e.ts';
import { notesScenario, playSignInScenario } from './support/play-sign-in.ts';

const root = join(import.meta.dirname, '..', '..');

describeWith(
  { browser: true, sandbox: false },
  'hono-server example: MCP sign-in and elicitation',
  () => {
    let fake: FakeOpenAI;
    let app: AppProcess;

    beforeAll(async () => {
      fake = await startFakeOpenAI({ script: notesScenario(), streamDelayMs: 5 });
      app = await startAppProcess({
        command: process.execPath,
        args: [join(root, 'examples/hono-server/src/main.ts')],
        env: {
          PORT: '0',
          OPENAI_API_KEY: 'test',
          OPENAI_BASE_URL: fake.baseURL,
          PYTHON_SANDBOX: 'off',
          MCP_TOKEN_KEY: 'e2e-only-secret-0123456789abcdefghijklmn',
        },
        readyPattern: /Listening on (http:\/\/127\.0\.0\.1:\d+)/,
      });
    });
    afterAll(async () => {
      await app?.stop();
      await fake?.close();
    });

    it('connects the notes server from the chat and answers its form', async () => {
      await using browser = await launchChromium();
      await playSignInScenario({
        context: browser.context,
        url: app.ready[1]!,
        fake,
        screenshot: join(root, 'test-results/e2e/hono-sign-in.png'),
      });
    }, 120_000);
  },
);
