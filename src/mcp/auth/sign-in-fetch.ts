import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpBlockedAddressError } from '../../errors/mcp-blocked-address-error.ts';
import { McpConnectionError } from '../../errors/mcp-connection-error.ts';
import type { AddressPolicy } from './address-policy.ts';

/** A sign-in request the authorization server (or the MCP server) refused. */
export type SignInFailure = {
  /** `protected resource metadata`, `code exchange`, `client registration`, ... */
  step: string;
  status: number;
  /** Origin and path of the request (no query). */
  url: string;
  /** The OAuth error code of the answer (`invalid_grant`, ...), when it had a well-formed one. */
  code?: string;
};

const MAX_BODY_BYTES = 1024 * 1024;
const MAX_REDIRECTS = 5;
const NULL_BODY = new Set([101, 204, 205, 304]);
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language'];

/**
 * The fetch a server's transport and the SDK's `auth()` use. Requests to the
 * MCP endpoint itself pass through untouched. The rest of the server's own
 * origin (its metadata, an authorization server on the same origin) is the
 * app's choice and allowed; any other origin is checked by `policy` (every
 * address its host resolves to, again at connect time), fetched over a
 * socket of its own and read whole (at most 1 MiB). Redirects are followed by
 * hand, each hop checked; a hop to another origin drops `Authorization`,
 * `Cookie` and `Proxy-Authorization`, as fetch would. A refused answer (4xx, 5xx) to a sign-in step is
 * reported to `onFailure` (and any other answer as `undefined`, so the last
 * report is about the last request) and its body replaced by its OAuth error code
 * alone, so an upstream's text never reaches error messages, callback pages
 * or `status()`.
 *
 * @example
 * ```ts
 * const fetch = signInFetch({ server: 'github', serverUrl, policy, onFailure: f => (last = f) });
 * ```
 */
export function signInFetch({
  server,
  serverUrl,
  policy,
  onFailure = () => {},
}: {
  /** The server's name, for errors. */
  server: string;
  /** Its MCP endpoint. */
  serverUrl: string;
  /** Which addresses other origins may have. */
  policy: AddressPolicy;
  /** Told how each sign-in request ended: what was refused, or undefined when it was not. */
  onFailure?: (failure: SignInFailure | undefined) => void;
}): FetchLike {
  const endpoint = new URL(serverUrl);
  const once = async (url: URL, init: RequestInit): Promise<Response> => {
    if (url.origin === endpoint.origin) return await fetch(url, init);
    await policy.check(url);
    return await pinnedFetch(url, init, policy, server);
  };
  return async (input, init = {}) => {
    let url = new URL(input);
    if (url.origin === endpoint.origin && url.pathname === endpoint.pathname) {
      return await fetch(input, init);
    }
    const follow = init.redirect === undefined || init.redirect === 'follow';
    let request: RequestInit = { ...init, redirect: 'manual' };
    for (let hop = 0; ; hop++) {
      const step = stepOf(url, request);
      const response = await once(url, request);
      const location = response.headers.get('location');
      if (follow && response.status >= 300 && response.status < 400 && location !== null) {
        if (hop === MAX_REDIRECTS) {
          throw new McpConnectionError({
            server,
            message: `Signing in to MCP server "${server}": the ${step} redirected more than ${MAX_REDIRECTS} times.`,
          });
        }
        await response.body?.cancel();
        const next = new URL(location, url);
        // As fetch does: credentials meant for one origin never go to the one it redirects to.
        if (next.origin !== url.origin) request = withoutHeaders(request, CREDENTIAL_HEADERS);
        url = next;
        // As fetch does: 303, and 301/302 after a POST, continue as a GET without a body.
        if (response.status === 303 || (request.method === 'POST' && response.status < 303)) {
          const { body: _body, ...rest } = withoutHeaders(request, BODY_HEADERS);
          request = { ...rest, method: 'GET' };
        }
        continue;
      }
      if (response.status < 400) {
        onFailure(undefined);
        return response;
      }
      const failure = { step, status: response.status, url: pathOf(url) };
      return await withheld({ response, failure, server, onFailure });
    }
  };
}

function withoutHeaders(init: RequestInit, names: readonly string[]): RequestInit {
  const headers = new Headers(init.headers);
  for (const name of names) headers.delete(name);
  // A plain record: undici's own fetch (other origins) takes it as readily as the global one.
  return { ...init, headers: Object.fromEntries(headers) };
}

// Over a socket whose address is checked when it connects (a second DNS
// answer cannot differ from the checked one), read whole, then closed.
async function pinnedFetch(
  url: URL,
  init: RequestInit,
  policy: AddressPolicy,
  server: string,
): Promise<Response> {
  const { Agent, fetch: undiciFetch } = await import('undici');
  const agent = new Agent({ connect: { lookup: policy.lookup(url) } });
  try {
    const response = await undiciFetch(url, {
      ...(init as Parameters<typeof undiciFetch>[1]),
      dispatcher: agent,
    });
    const body = await readCapped(response.body as ReadableStream<Uint8Array> | null, url, server);
    // A Response of this runtime, which the SDK checks with `instanceof`.
    return new Response(NULL_BODY.has(response.status) ? null : new Uint8Array(body), {
      status: response.status,
      statusText: response.statusText,
      headers: [...response.headers],
    });
  } catch (error) {
    // undici reports a refused connection as TypeError('fetch failed'), which the SDK's
    // discovery would take for a CORS failure and skip: the refusal itself is the error.
    const cause = (error as { cause?: unknown }).cause;
    if (McpBlockedAddressError.isInstance(cause)) throw cause;
    throw error;
  } finally {
    await agent.close();
  }
}

async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  url: URL,
  server: string,
): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (body === null) return Buffer.alloc(0);
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) {
      await body.cancel().catch(() => {});
      throw new McpConnectionError({
        server,
        message: `Signing in to MCP server "${server}": ${pathOf(url)} answered with more than 1 MiB.`,
      });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

// The refused answer with only its OAuth error code: the SDK still tells
// `invalid_grant` from `invalid_client` (and retries accordingly), but
// `error_description` and non-OAuth bodies (HTML pages, stack traces) stay out.
async function withheld({
  response,
  failure,
  server,
  onFailure,
}: {
  response: Response;
  failure: SignInFailure;
  server: string;
  onFailure: (failure: SignInFailure | undefined) => void;
}): Promise<Response> {
  const body = await readCapped(response.body, new URL(failure.url), server);
  const text = new TextDecoder().decode(body);
  let code: string | undefined;
  try {
    const parsed = (JSON.parse(text) as { error?: unknown } | null)?.error;
    if (typeof parsed === 'string' && /^[a-z0-9_]{1,64}$/.test(parsed)) code = parsed;
  } catch {
    // Not JSON: nothing of it is kept.
  }
  const described = { ...failure, ...(code === undefined ? {} : { code }) };
  onFailure(described);
  return new Response(
    JSON.stringify({
      error: code ?? 'server_error',
      error_description: describeFailure(described),
    }),
    { status: response.status, headers: { 'content-type': 'application/json' } },
  );
}

/** What failed, without the answer's body: `HTTP 400 (invalid_grant) to the code exchange at https://as.example/token`. */
export function describeFailure({ step, status, url, code }: SignInFailure): string {
  return `HTTP ${status}${code === undefined ? '' : ` (${code})`} to the ${step} at ${url}`;
}

function pathOf(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

// Which sign-in step a request is, from its shape.
function stepOf(url: URL, init: RequestInit): string {
  if (url.pathname.includes('/.well-known/oauth-protected-resource'))
    return 'protected resource metadata request';
  if (url.pathname.includes('/.well-known/')) return 'authorization server metadata request';
  const body = init.body;
  const form =
    body instanceof URLSearchParams
      ? body
      : typeof body === 'string' && !body.trimStart().startsWith('{')
        ? new URLSearchParams(body)
        : undefined;
  const grant = form?.get('grant_type');
  if (grant === 'authorization_code') return 'code exchange';
  if (grant === 'refresh_token') return 'token refresh';
  if (grant) return 'token request';
  if ((init.method ?? 'GET').toUpperCase() === 'POST') return 'client registration';
  return 'sign-in request';
}
