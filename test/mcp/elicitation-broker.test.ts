import { describe, expect, it } from 'vitest';
import { McpElicitationBroker, type McpElicitationPart } from '../../src/mcp/index.ts';
import type { McpElicitationRequest } from '../../src/mcp/elicitation.ts';

function formRequest(userId: string, abortSignal = new AbortController().signal) {
  return {
    mode: 'form',
    server: 'notes',
    userId,
    toolCallId: 'call-1',
    message: 'Which folder?',
    requestedSchema: { type: 'object', properties: { folder: { type: 'string' } } },
    abortSignal,
  } as McpElicitationRequest;
}

describe('McpElicitationBroker', () => {
  it("shows the form on the user's stream and resolves the hook with that user's answer", async () => {
    const broker = new McpElicitationBroker();
    const parts: McpElicitationPart[] = [];
    const stop = broker.subscribe('alice', part => parts.push(part));
    const pending = broker.handler(formRequest('alice'));
    expect(parts).toMatchObject([
      { server: 'notes', message: 'Which folder?', toolCallId: 'call-1', state: 'pending' },
    ]);
    const id = parts[0]!.id;
    // Another user cannot answer it, and an unknown id settles nothing.
    expect(broker.answer({ id, userId: 'mallory', result: { action: 'accept' } })).toBe(false);
    expect(broker.answer({ id: 'nope', userId: 'alice', result: { action: 'decline' } })).toBe(
      false,
    );
    const result = { action: 'accept', content: { folder: 'work' } } as const;
    expect(broker.answer({ id, userId: 'alice', result })).toBe(true);
    await expect(pending).resolves.toEqual(result);
    expect(parts.at(-1)).toMatchObject({ id, state: 'accept' });
    // Answered once: a second answer finds nothing.
    expect(broker.answer({ id, userId: 'alice', result })).toBe(false);
    stop();
  });

  it('declines at once with no open stream for the user, or for URL mode', async () => {
    const broker = new McpElicitationBroker();
    await expect(broker.handler(formRequest('bob'))).resolves.toEqual({ action: 'decline' });
    broker.subscribe('bob', () => {});
    const url = {
      ...formRequest('bob'),
      mode: 'url',
      url: 'https://example.test/consent',
      elicitationId: 'e1',
    } as McpElicitationRequest;
    await expect(broker.handler(url)).resolves.toEqual({ action: 'decline' });
  });

  it('cancels the form when the server gives up, and tells the stream', async () => {
    const broker = new McpElicitationBroker();
    const parts: McpElicitationPart[] = [];
    broker.subscribe('carol', part => parts.push(part));
    const controller = new AbortController();
    const pending = broker.handler(formRequest('carol', controller.signal));
    controller.abort();
    await expect(pending).resolves.toEqual({ action: 'cancel' });
    expect(parts.map(part => part.state)).toEqual(['pending', 'cancel']);
  });
});
