import { afterEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/index.ts';
import {
  connectMcpServers,
  McpElicitationBroker,
  type McpElicitationPart,
  type McpToolbox,
} from '../../src/mcp/index.ts';
import type { McpElicitationRequest } from '../../src/mcp/elicitation/elicitation.ts';
import { nestedLists } from '../helpers/nested-json.ts';
import { callOptions, fixture } from './helpers.ts';

const open: McpToolbox[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(toolbox => toolbox.close()));
});

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

  it("shows a server's question and field labels without control or bidirectional characters, and a schema of any depth", async () => {
    const broker = new McpElicitationBroker();
    const parts: McpElicitationPart[] = [];
    const stop = broker.subscribe('alice', part => parts.push(part));
    const deep = nestedLists(4_500);
    const request = {
      ...formRequest('alice'),
      // Reads "Delete settings.txt" with the override in.
      message: 'Delete \u202Etxt.sgnittes',
      requestedSchema: {
        type: 'object',
        properties: { folder: { type: 'string', title: 'Fol\u200Fder\u0000', deep } },
      },
    } as unknown as McpElicitationRequest;
    void broker.handler(request);
    const [part] = parts;
    expect(part?.message).toBe('Delete txt.sgnittes');
    const folder = (part?.requestedSchema as { properties: { folder: { title: string } } })
      .properties.folder;
    expect(folder.title).toBe('Folder');
    expect(() => JSON.stringify(part)).not.toThrow();
    broker.answer({ id: part!.id, userId: 'alice', result: { action: 'decline' } });
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

  it('withdraws a form the user let expire: a late answer is refused, and nothing stays open', async () => {
    const broker = new McpElicitationBroker();
    const toolbox = await connectMcpServers({
      servers: { forms: fixture('elicitation-server.ts') },
      onElicitation: broker.handler,
      elicitationTimeoutMs: 200,
    });
    open.push(toolbox);
    // A shared server's requests carry no user: the broker files them under ''.
    const parts: McpElicitationPart[] = [];
    broker.subscribe('', part => parts.push(part));
    const output = (await toolbox.tools.ask!.execute!({}, callOptions())) as {
      content: { text: string }[];
    };
    expect(JSON.parse(output.content[0]!.text)).toEqual({ action: 'cancel' });
    expect(parts.map(part => part.state)).toEqual(['pending', 'cancel']);
    expect(broker.openForms('')).toBe(0);
    const late = broker.answer({ id: parts[0]!.id, userId: '', result: { action: 'accept' } });
    expect(late).toBe(false);
  });

  it('declines forms past maxOpenPerUser for that user only, and frees a seat once one is answered', async () => {
    const broker = new McpElicitationBroker({ maxOpenPerUser: 2 });
    const parts: McpElicitationPart[] = [];
    broker.subscribe('dave', part => parts.push(part));
    broker.subscribe('erin', () => {});
    const first = broker.handler(formRequest('dave'));
    void broker.handler(formRequest('dave'));
    await expect(broker.handler(formRequest('dave'))).resolves.toEqual({ action: 'decline' });
    expect(parts).toHaveLength(2); // the declined one was never shown
    expect(broker.openForms('dave')).toBe(2);
    // Another user's forms are not counted against dave.
    void broker.handler(formRequest('erin'));
    expect(broker.openForms('erin')).toBe(1);
    broker.answer({ id: parts[0]!.id, userId: 'dave', result: { action: 'decline' } });
    await expect(first).resolves.toEqual({ action: 'decline' });
    void broker.handler(formRequest('dave'));
    expect(broker.openForms('dave')).toBe(2);
    expect(parts.filter(part => part.state === 'pending')).toHaveLength(3);
  });

  it('cancels at once a request whose server already gave up, showing nothing', async () => {
    const broker = new McpElicitationBroker();
    const parts: McpElicitationPart[] = [];
    broker.subscribe('fay', part => parts.push(part));
    await expect(broker.handler(formRequest('fay', AbortSignal.abort()))).resolves.toEqual({
      action: 'cancel',
    });
    expect(parts).toEqual([]);
    expect(broker.openForms('fay')).toBe(0);
  });

  it('refuses a cap that is not a whole number of at least 1', () => {
    expect(() => new McpElicitationBroker({ maxOpenPerUser: 0 })).toThrow(InvalidArgumentError);
    expect(() => new McpElicitationBroker({ maxOpenPerUser: 1.5 })).toThrow(/maxOpenPerUser/);
  });
});
