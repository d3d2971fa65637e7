// The Hono example as a real process with AI_TOOLBELT_SANDBOX_ENGINE=kubernetes: the python tool
// runs in gVisor pods of the local cluster (the app's kubeconfig has the documented Role only),
// and the app leaves no pod when it stops.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AppProcess, startAppProcess } from '../e2e/support/app-process.ts';
import {
  EXPECTED_AVERAGE,
  PYTHON_ERROR,
  QUESTION,
  weatherScenario,
} from '../e2e/support/weather-scenario.ts';
import { answerText, chatRequest, dataParts, readUIChunks } from '../examples/ui-chunks.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fixtures/fake-openai/fake-openai-server.ts';
import { describeKubernetes } from './cluster.ts';
import { type SandboxNamespace, createSandboxNamespace } from './sandbox-namespace.ts';

const main = join(import.meta.dirname, '../../examples/hono-server/src/main.ts');
const noModels = mkdtempSync(join(tmpdir(), 'aitb-no-models-'));

describeKubernetes('the Hono example with its python tool on Kubernetes', () => {
  let ns: SandboxNamespace;
  let fake: FakeOpenAI;
  let app: AppProcess;

  beforeAll(async () => {
    ns = await createSandboxNamespace();
    fake = await startFakeOpenAI({ script: weatherScenario() });
    app = await startAppProcess({
      command: process.execPath,
      args: [main],
      env: {
        PORT: '0',
        OPENAI_API_KEY: 'test',
        OPENAI_BASE_URL: fake.baseURL,
        AI_TOOLBELT_MODELS_DIR: noModels,
        AI_TOOLBELT_SANDBOX_ENGINE: 'kubernetes',
        AI_TOOLBELT_KUBERNETES_NAMESPACE: ns.namespace,
        KUBECONFIG: ns.kubeconfig,
      },
      readyPattern: /Listening on (http:\/\/127\.0\.0\.1:\d+)/,
    });
  }, 180_000);

  afterAll(async () => {
    await app?.stop();
    await fake?.close();
    await ns?.remove();
  }, 180_000);

  it('streams a repaired python run over HTTP, run in pods', async () => {
    expect(app.output()).toContain('[python] sandbox ready (Kubernetes pods + gVisor)');
    const response = await fetch(`${app.ready[1]}/api/chat`, chatRequest(QUESTION));
    expect(response.status).toBe(200);
    const chunks = await readUIChunks(response);
    const attempts = dataParts<{ state: string; error?: string }>(chunks, 'data-repair');
    expect(attempts.map(attempt => attempt.state)).toEqual(['failed', 'success']);
    expect(attempts[0]?.error).toContain(PYTHON_ERROR);
    expect(answerText(chunks)).toContain(`was ${EXPECTED_AVERAGE} °C`);
    // Its interpreter is a pod of the namespace.
    expect((await ns.pods()).some(pod => pod.name.startsWith('ai-toolbelt-'))).toBe(true);
  }, 180_000);

  it('leaves no pod when it stops', async () => {
    await app.stop();
    expect(app.child.exitCode).toBe(0);
    expect((await ns.pods()).filter(pod => !pod.deleting)).toEqual([]);
  }, 120_000);
});
