// What a hostile MCP server's OAuth metadata cannot make sign-in do: reach
// addresses on the app's own network, or put its own text into the app's
// error messages, callback pages and status().
import { createStorage } from 'unstorage';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  connectMcpServers,
  createMcpOAuth,
  McpAuthorizationError,
  type McpBlockedAddressError,
  type McpHttpServerConfig,
  type McpToolbox,
} from '../../src/mcp/index.ts';
import {
  type Canary,
  type HostileOptions,
  type HostileServer,
  startCanary,
  startHostileServer,
} from '../fixtures/mcp/hostile-oauth-server.ts';
import { signIn } from './sign-in.ts';

const SECRET = 'UPSTREAM-BODY-7f3a';
let canary: Canary;
const servers: HostileServer[] = [];
const open: McpToolbox[] = [];
beforeAll(async () => {
  canary = await startCanary();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map(toolbox => toolbox.close()));
  await Promise.all(servers.splice(0).map(server => server.close()));
  canary.hits.length = 0;
});
afterAll(() => canary?.close());

async function hostile(options: HostileOptions, config: Partial<McpHttpServerConfig> = {}) {
  const server = await startHostileServer(options);
  servers.push(server);
  const oauth = createMcpOAuth({ store: createStorage(), redirectUrl: 'http://127.0.0.1:3000/cb' });
  const toolbox = await connectMcpServers({
    servers: { evil: { url: server.url, auth: oauth, ...config } },
    userId: 'ada',
    // Bounds the wait where nothing refuses the request (an unroutable 169.254.169.254).
    connectTimeoutMs: 3_000,
  });
  open.push(toolbox);
  return { server, toolbox, status: () => toolbox.status().evil! };
}

// By name, so these tests also run (and fail) against code without the class.
function blocked(error: unknown): McpBlockedAddressError | undefined {
  for (let e = error; e != null; e = (e as { cause?: unknown }).cause)
    if ((e as Error).name === 'ToolbeltMcpBlockedAddressError') return e as McpBlockedAddressError;
  return undefined;
}

describe('sign-in discovery, registration and token requests', () => {
  it('refuses metadata that points at another loopback port, before sending anything there', async () => {
    const { status } = await hostile({ authorizationServer: () => canary.origin });
    expect(status().state).toBe('failed');
    expect(blocked(status().error)).toMatchObject({
      name: 'ToolbeltMcpBlockedAddressError',
      server: 'evil',
      url: canary.origin,
      address: '127.0.0.1',
      range: 'loopback',
    });
    expect(status().error!.message).toMatch(
      /127\.0\.0\.1, a loopback address.*authAllowedAddresses/,
    );
    expect(canary.hits).toEqual([]);
  });

  it('refuses the cloud metadata address (169.254.169.254)', async () => {
    const { status } = await hostile({ authorizationServer: () => 'http://169.254.169.254' });
    expect(blocked(status().error)).toMatchObject({
      address: '169.254.169.254',
      range: 'linkLocal',
    });
  });

  it('resolves host names: localhost in the 401 is loopback, so nothing is sent there', async () => {
    // The SDK falls back to the server's own origin when the resource metadata is refused.
    const { server, status } = await hostile({
      resourceMetadata: () =>
        `http://localhost:${canary.port}/.well-known/oauth-protected-resource`,
    });
    expect(status().state).toBe('needs-auth');
    expect(new URL(status().authorizationUrl!).origin).toBe(server.origin);
    expect(canary.hits).toEqual([]);
  });

  it('reaches a non-public address the app allows', async () => {
    const { status } = await hostile(
      { authorizationServer: () => canary.origin },
      { authAllowedAddresses: ['127.0.0.0/8'] },
    );
    expect(canary.hits.length).toBeGreaterThan(0);
    expect(blocked(status().error)).toBeUndefined();
  });

  it('rejects an allow-list entry that is not an address or range', async () => {
    await expect(
      connectMcpServers({
        servers: {
          evil: {
            url: 'http://127.0.0.1:1/mcp',
            auth: createMcpOAuth({ store: createStorage(), redirectUrl: 'http://127.0.0.1/cb' }),
            authAllowedAddresses: ['intranet.local'],
          },
        },
      }),
    ).rejects.toThrow(/servers\.evil\.authAllowedAddresses\[0\].*CIDR/);
  });
});

describe('upstream error bodies', () => {
  it('are not echoed into status().error when registration fails', async () => {
    const { status } = await hostile({
      registration: { status: 500, body: `<html><h1>${SECRET}</h1><script>x()</script></html>` },
    });
    expect(status().state).toBe('failed');
    const message = status().error!.message;
    expect(message).toMatch(
      /HTTP 500 to the client registration at http:\/\/127\.0\.0\.1:\d+\/register/,
    );
    expect(message).not.toContain(SECRET);
    expect(message).not.toContain('<');
  });

  it('are not echoed into finishAuth errors (callback pages): OAuth error codes are, descriptions are not', async () => {
    for (const [token, expected] of [
      [
        {
          status: 400,
          type: 'application/json',
          body: JSON.stringify({ error: 'invalid_grant', error_description: `${SECRET} <b>` }),
        },
        /HTTP 400 \(invalid_grant\) to the code exchange at http:\/\/127\.0\.0\.1:\d+\/token/,
      ],
      [{ status: 502, body: `<pre>${SECRET}</pre>` }, /HTTP 502 to the code exchange/],
    ] as const) {
      const { toolbox, status } = await hostile({ token });
      expect(status().state).toBe('needs-auth');
      const error = await toolbox
        .finishAuth(await signIn(status().authorizationUrl, 'ada'))
        .catch((e: unknown) => e);
      expect(McpAuthorizationError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ reason: 'exchange-failed' });
      expect((error as Error).message).toMatch(expected);
      expect((error as Error).message).not.toContain(SECRET);
      expect(JSON.stringify(status())).not.toContain(SECRET);
    }
  });
});
