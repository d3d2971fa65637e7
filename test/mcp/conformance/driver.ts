// The client under test for the official MCP conformance suite
// (@modelcontextprotocol/conformance, client mode). It uses only the public
// API: connectMcpServers, createMcpOAuth and what they return. The suite
// appends the scenario's server URL as the last argument and names the
// scenario in MCP_CONFORMANCE_SCENARIO (context such as client credentials
// in MCP_CONFORMANCE_CONTEXT, JSON).
//
//   npx conformance client --command "node test/mcp/conformance/driver.ts" --scenario initialize
import {
  ClientCredentialsProvider,
  PrivateKeyJwtProvider,
} from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { createStorage } from 'unstorage';
import {
  connectMcpServers,
  createMcpOAuth,
  McpAuthorizationError,
  type McpHttpServerConfig,
  type McpToolbox,
} from '../../../src/mcp/index.ts';

const serverUrl = process.argv.at(-1)!;
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as Record<string, string>;
const redirectUrl = 'http://localhost:3000/callback';
// The suite's authorization servers listen on other loopback ports than its MCP
// servers; sign-in reaches non-public addresses only when allowed.
const authAllowedAddresses = ['127.0.0.0/8', '::1'];

function serverConfig(): McpHttpServerConfig {
  if (scenario === 'auth/client-credentials-basic') {
    return {
      url: serverUrl,
      authAllowedAddresses,
      auth: new ClientCredentialsProvider({
        clientId: context.client_id!,
        clientSecret: context.client_secret!,
      }),
    };
  }
  if (scenario === 'auth/client-credentials-jwt') {
    return {
      url: serverUrl,
      authAllowedAddresses,
      auth: new PrivateKeyJwtProvider({
        clientId: context.client_id!,
        privateKey: context.private_key_pem!,
        algorithm: context.signing_algorithm ?? 'ES256',
      }),
    };
  }
  if (!scenario.startsWith('auth/')) return { url: serverUrl };
  return {
    url: serverUrl,
    authAllowedAddresses,
    auth: createMcpOAuth({
      store: createStorage(),
      redirectUrl,
      clientName: 'ai-toolbelt conformance driver',
      // Used where the authorization server supports client ID metadata documents (SEP-991).
      clientMetadataUrl: 'https://conformance-test.local/client-metadata.json',
      clients:
        context.client_id === undefined
          ? {}
          : { server: { client_id: context.client_id, client_secret: context.client_secret } },
    }),
  };
}

// The test authorization servers approve at once: the authorization URL
// redirects straight to the callback with a code, as a user signing in would.
async function signIn(toolbox: McpToolbox, url: string | undefined): Promise<void> {
  if (url === undefined) throw new Error('needs-auth without an authorization URL');
  const response = await getOnce(url);
  const location = response.headers.get('location');
  if (location === null) throw new Error(`no redirect from ${url} (HTTP ${response.status})`);
  const callback = new URL(location);
  const code = callback.searchParams.get('code');
  if (code === null) throw new Error(`no code in the redirect: ${location}`);
  const state = callback.searchParams.get('state') ?? undefined;
  await toolbox.finishAuth({ server: 'server', code, ...(state ? { state } : {}) });
}

// A browser retries a page load whose kept-alive connection the server had just closed.
async function getOnce(url: string): Promise<Response> {
  try {
    return await fetch(url, { redirect: 'manual' });
  } catch {
    return await fetch(url, { redirect: 'manual' });
  }
}

// Plausible arguments from a tool's JSON Schema: every required property.
function argumentsFor(schema: {
  properties?: Record<string, { type?: string }>;
  required?: string[];
}) {
  const args: Record<string, unknown> = {};
  for (const name of schema.required ?? []) {
    const type = schema.properties?.[name]?.type;
    args[name] = type === 'number' || type === 'integer' ? 2 : type === 'boolean' ? true : 'x';
  }
  return args;
}

const toolbox = await connectMcpServers({
  servers: { server: serverConfig() },
  userId: 'conformance-user',
  connectTimeoutMs: 60_000,
  reconnect: { maxAttempts: 0 },
  // Accept every form without changes: the SDK fills in the schema's defaults.
  onElicitation: async () => ({ action: 'accept' }),
});
try {
  for (let round = 0; toolbox.status().server!.state === 'needs-auth'; round++) {
    if (round === 3) throw new Error('still needs sign-in after 3 rounds');
    await signIn(toolbox, toolbox.status().server!.authorizationUrl);
  }
  const status = toolbox.status().server!;
  if (status.state !== 'ready') throw status.error ?? new Error(`server is ${status.state}`);
  const options = { toolCallId: 'conformance', messages: [], context: undefined as never };
  for (const [name, tool] of Object.entries(toolbox.tools)) {
    const schema = (tool.inputSchema as { jsonSchema?: object }).jsonSchema ?? {};
    for (let round = 0; ; round++) {
      try {
        await tool.execute!(argumentsFor(schema), options);
        break;
      } catch (error) {
        // A call needing more scope (step-up) makes the server `needs-auth` again.
        if (!McpAuthorizationError.isInstance(error) || round === 2) throw error;
        await signIn(toolbox, error.authorizationUrl);
      }
    }
  }
} finally {
  await toolbox.close();
}
