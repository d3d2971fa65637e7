// The Hono example as a real process on a real port, as `npm start` runs it.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listSandboxContainers } from '../../src/internal.ts';
import { describeLocalModel, localModelPath } from '../helpers/local-model.ts';
import { type AppProcess, startAppProcess } from '../e2e/support/app-process.ts';
import { describeWith } from '../e2e/support/describe-e2e.ts';
import {
  EXPECTED_AVERAGE,
  PYTHON_ERROR,
  QUESTION,
  weatherScenario,
} from '../e2e/support/weather-scenario.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fixtures/fake-openai/fake-openai-server.ts';
import { answerText, chatRequest, dataParts, readUIChunks } from './ui-chunks.ts';

const main = join(import.meta.dirname, '../../examples/hono-server/src/main.ts');
const ready = /Listening on (http:\/\/127\.0\.0\.1:\d+)/;
// A models folder without the local model: a machine where `fetch-model` never ran.
const noModels = mkdtempSync(join(tmpdir(), 'aitb-no-models-'));

describe('without a model and without Docker', () => {
  let app: AppProcess;
  beforeAll(async () => {
    app = await startAppProcess({
      command: process.execPath,
      args: [main],
      // No key, no local model, and a Docker socket that does not exist: all must degrade, not crash.
      env: {
        PORT: '0',
        OPENAI_API_KEY: '',
        AI_TOOLBELT_MODELS_DIR: noModels,
        DOCKER_HOST: 'unix:///nonexistent/docker.sock',
      },
      readyPattern: ready,
    });
  });
  afterAll(() => app?.stop());

  it('starts, says what to set, and serves everything but chat', async () => {
    const url = app.ready[1]!;
    // Warnings go to stderr, which may arrive after the "Listening" line on stdout.
    await expect
      .poll(app.output)
      .toContain('[model] No language model is configured. Set OPENAI_API_KEY');
    await expect.poll(app.output).toMatch(/\[python\] disabled: Cannot reach the Docker engine/);
    expect(app.output()).toContain(
      '[retrieval] lexical (no embedding model: run npx ai-toolbelt fetch-model for the local one, or set OPENAI_API_KEY)\n',
    );

    const health = await (await fetch(`${url}/healthz`)).json();
    expect(health.python.enabled).toBe(false);
    expect(health.python.problem).toContain('npx ai-toolbelt setup-sandbox');
    // The bundled notes server signs in per browser: no connection until a user asks.
    expect(health.mcp.map((server: { state: string }) => server.state)).toEqual([
      'ready',
      'ready',
      'per-user',
    ]);

    const search = await (await fetch(`${url}/api/tools/search?q=temperature+last+week`)).json();
    expect(search.results[0].name).toBe('temperature_history');

    const chat = await fetch(`${url}/api/chat`, chatRequest('Hello'));
    expect(chat.status).toBe(503);
    expect((await chat.json()).error).toContain('OPENAI_API_KEY');
  });

  it('answers only its own host and origin over real HTTP', async () => {
    const url = app.ready[1]!;
    // What a browser sends after DNS rebinding: the attacker's name in Host (fetch sets its own).
    expect(await statusWithHost(`${url}/healthz`, 'rebind.attacker.test')).toBe(421);
    const crossSite = await fetch(`${url}/api/chat`, {
      method: 'POST',
      headers: { origin: 'http://evil.test', 'content-type': 'text/plain' },
      body: '{"messages":[]}',
    });
    expect(crossSite.status).toBe(403);
    // localhost at the same port is the same app.
    expect(await statusWithHost(`${url}/healthz`, `localhost:${new URL(url).port}`)).toBe(200);
  });

  it('exits cleanly on SIGTERM', async () => {
    await app.stop();
    expect(app.child.exitCode).toBe(0);
  });
});

describe('with REDIS_URL but no MCP_TOKEN_KEY', () => {
  it('stops at start-up with one line naming MCP_TOKEN_KEY, before connecting anywhere', async () => {
    const child = spawn(process.execPath, [main], {
      // Nothing listens on port 1: the check must come before any connection is tried.
      env: { ...process.env, PORT: '0', REDIS_URL: 'redis://127.0.0.1:1', MCP_TOKEN_KEY: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', chunk => (output += chunk));
    child.stderr.on('data', chunk => (output += chunk));
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toEqual([
      expect.stringMatching(/^REDIS_URL is set but MCP_TOKEN_KEY is not: set MCP_TOKEN_KEY/),
    ]);
  });
});

describeLocalModel('with the local model (and a key)', 'all-MiniLM-L6-v2', () => {
  let fake: FakeOpenAI;
  let app: AppProcess;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    app = await startAppProcess({
      command: process.execPath,
      args: [main],
      env: {
        PORT: '0',
        OPENAI_API_KEY: 'test',
        OPENAI_BASE_URL: fake.baseURL,
        PYTHON_SANDBOX: 'off',
      },
      readyPattern: ready,
    });
  });
  afterAll(async () => {
    await app?.stop();
    await fake?.close();
  });

  it('embeds the tools with it, says so at start, and finds tools by meaning', async () => {
    // Installed, it goes before the provider's model: the key's server sees no embedding call.
    expect(app.output()).toContain(
      `[retrieval] hybrid, local all-MiniLM-L6-v2 (${localModelPath('all-MiniLM-L6-v2')}), embeddings kept in memory`,
    );
    expect(app.output().match(/\[retrieval\]/g)).toHaveLength(1);
    const url = app.ready[1]!;
    // No word of the request is in the tool's description: only the embeddings find it.
    const search = await (
      await fetch(`${url}/api/tools/search?q=will+I+need+an+umbrella+tomorrow&k=1`)
    ).json();
    expect(search.results[0].name).toBe('forecast');
    expect(fake.requests.filter(request => request.api === 'embeddings')).toEqual([]);
  });

  it('ends its worker thread and exits cleanly on SIGTERM', async () => {
    await app.stop();
    expect(app.child.exitCode).toBe(0);
  });
});

describeWith({}, 'with the fake model and the sandbox', () => {
  let fake: FakeOpenAI;
  let app: AppProcess;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ script: weatherScenario() });
    app = await startAppProcess({
      command: process.execPath,
      args: [main],
      // No local model: the key's server embeds the tools (the fake serves /v1/embeddings).
      env: {
        PORT: '0',
        OPENAI_API_KEY: 'test',
        OPENAI_BASE_URL: fake.baseURL,
        AI_TOOLBELT_MODELS_DIR: noModels,
      },
      readyPattern: ready,
    });
  });
  afterAll(async () => {
    await app?.stop();
    await fake?.close();
  });

  it('streams a repaired python run over HTTP', async () => {
    expect(app.output()).toContain('[python] sandbox ready');
    const response = await fetch(`${app.ready[1]}/api/chat`, chatRequest(QUESTION));
    expect(response.status).toBe(200);
    const chunks = await readUIChunks(response);
    // With a key, the tools are embedded (text-embedding-3-small at the fake server): hybrid.
    expect(app.output()).toContain(
      `[retrieval] hybrid, openai:text-embedding-3-small at ${new URL(fake.baseURL).host}, embeddings kept in memory`,
    );
    const selections = dataParts<{ retrieval: string }>(chunks, 'data-tool-selection');
    expect(selections.map(selection => selection.retrieval)).toEqual(
      selections.map(() => 'hybrid'),
    );
    expect(selections.length).toBeGreaterThan(0);
    const embeddings = fake.requests.filter(request => request.api === 'embeddings');
    expect(embeddings.map(request => request.model)).toContain('text-embedding-3-small');
    const attempts = dataParts<{ state: string; error?: string }>(chunks, 'data-repair');
    expect(attempts.map(attempt => attempt.state)).toEqual(['failed', 'success']);
    expect(attempts[0]?.error).toContain(PYTHON_ERROR);
    expect(answerText(chunks)).toContain(`was ${EXPECTED_AVERAGE} °C`);
  });

  it('removes its sandbox containers when it stops', async () => {
    const pid = app.child.pid!;
    await app.stop();
    expect(app.child.exitCode).toBe(0);
    expect(await listSandboxContainers({ docker: new Docker(), pid })).toEqual([]);
  });
});

// GET `url` with this Host header (node:http sends it as given).
function statusWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request(url, { headers: { host } }, response => {
      response.resume();
      resolve(response.statusCode!);
    })
      .on('error', reject)
      .end();
  });
}
