import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolIndex } from '../../src/index.ts';
import {
  type ConnectMcpServersOptions,
  connectMcpServers,
  type McpElicitationHandler,
  type McpElicitationRequest,
  type McpToolbox,
} from '../../src/mcp/index.ts';
import { callOptions, eventRecorder, fixture } from './helpers.ts';

const open: McpToolbox[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(toolbox => toolbox.close()));
});

async function ask(options: Omit<Partial<ConnectMcpServersOptions<ToolIndex>>, 'index'>) {
  const recorder = eventRecorder();
  const toolbox = await connectMcpServers<ToolIndex>({
    servers: { forms: fixture('elicitation-server.ts') },
    onEvent: recorder.onEvent,
    ...options,
  });
  open.push(toolbox);
  const output = (await toolbox.tools.ask!.execute!(
    {},
    { ...callOptions(), toolCallId: 'call-7' },
  )) as {
    content: { text: string }[];
  };
  return { answer: JSON.parse(output.content[0]!.text), recorder, toolbox };
}

describe('elicitation', () => {
  it('hands the server request to the hook, and fills in the defaults of an unchanged form', async () => {
    const requests: McpElicitationRequest[] = [];
    const abortedWhileAsked: boolean[] = [];
    const { answer, recorder } = await ask({
      onElicitation: request => {
        requests.push(request);
        abortedWhileAsked.push(request.abortSignal.aborted);
        return { action: 'accept' };
      },
    });
    expect(answer).toEqual({
      action: 'accept',
      content: { name: 'Ada', age: 36, subscribe: true, color: 'green' },
    });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      server: 'forms',
      tool: 'ask',
      toolCallId: 'call-7',
      mode: 'form',
      message: 'Who are you?',
      requestedSchema: { properties: { name: { default: 'Ada' } }, required: ['name'] },
    });
    // Live while the hook decides; aborted once settled, so a form it showed is withdrawn.
    expect(abortedWhileAsked).toEqual([false]);
    expect(requests[0]!.abortSignal.aborted).toBe(true);
    expect(recorder.events).toContainEqual(
      expect.objectContaining({ type: 'elicitation', server: 'forms', action: 'accept' }),
    );
  });

  it("keeps the user's answers and defaults only the fields left out", async () => {
    const { answer } = await ask({
      onElicitation: () => ({ action: 'accept', content: { name: 'Grace', subscribe: false } }),
    });
    expect(answer.content).toEqual({ name: 'Grace', age: 36, subscribe: false, color: 'green' });
  });

  it('passes a decline on', async () => {
    const { answer } = await ask({ onElicitation: () => ({ action: 'decline' }) });
    expect(answer).toEqual({ action: 'decline' });
  });

  it('declines at once without a hook (the call does not hang)', async () => {
    const started = performance.now();
    const { answer } = await ask({ callTimeoutMs: 10_000 });
    expect(answer).toEqual({ action: 'decline' });
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('cancels when the hook throws or answers nonsense, and reports it', async () => {
    const throwing = await ask({
      onElicitation: () => {
        throw new Error('form renderer crashed');
      },
    });
    expect(throwing.answer).toEqual({ action: 'cancel' });
    expect(throwing.recorder.events).toContainEqual(
      expect.objectContaining({ type: 'error', server: 'forms' }),
    );
    const nonsense = await ask({
      onElicitation: (() => ({ action: 'maybe' })) as unknown as McpElicitationHandler,
    });
    expect(nonsense.answer).toEqual({ action: 'cancel' });
  });

  it('cancels when the user does not answer within elicitationTimeoutMs', async () => {
    const { answer } = await ask({
      elicitationTimeoutMs: 200,
      onElicitation: () => new Promise(() => {}),
    });
    expect(answer).toEqual({ action: 'cancel' });
  });

  it('stops the call timeout while the user fills in the form', async () => {
    // The form takes twice the call budget; only the server's own time counts.
    const { answer } = await ask({
      callTimeoutMs: 400,
      onElicitation: async () => {
        await delay(800);
        return { action: 'accept', content: { name: 'Lin' } };
      },
    });
    expect(answer.content.name).toBe('Lin');
  });
});
