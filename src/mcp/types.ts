import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ToolDescriptor, UpsertResult } from '../retrieval/types.ts';
import type { McpServerAuth } from './auth/connection-auth.ts';

/**
 * The part of the tool index that MCP discovery drives. `createToolIndex()`
 * satisfies it; any object with these methods works.
 */
export type McpToolIndex = {
  /** Adds or replaces tools; implementations re-embed only changed ones. */
  upsert(
    tools: readonly ToolDescriptor[],
    options?: { abortSignal?: AbortSignal },
  ): Promise<UpsertResult>;
  /** Removes tools by name; returns how many were present. */
  remove(names: readonly string[]): number;
  /** Names currently indexed. */
  names(): string[];
};

/** Limits that can be set for all servers and overridden per server. */
export type McpServerLimits = {
  /** Spawning or reaching the server plus the MCP handshake. */
  connectTimeoutMs?: number;
  /** Reading every `tools/list` page, in total. */
  listTimeoutMs?: number;
  /** One `tools/call`. */
  callTimeoutMs?: number;
  /** Most `tools/list` pages accepted before paging is declared endless. */
  maxPages?: number;
};

/** A server started as a child process speaking MCP on stdin/stdout. */
export type McpStdioServerConfig = McpServerLimits & {
  type?: 'stdio';
  /** Executable to run, e.g. `node` or `uvx`. */
  command: string;
  /** Its arguments. */
  args?: string[];
  /** Extra environment (added to a safe default set: PATH, HOME, ...). */
  env?: Record<string, string>;
  /** Working directory. */
  cwd?: string;
  /** The child's stderr: shown (`inherit`, default) or discarded (`ignore`). */
  stderr?: 'inherit' | 'ignore';
};

/** A server reached over MCP Streamable HTTP. */
export type McpHttpServerConfig = McpServerLimits & {
  type?: 'http';
  /** The MCP endpoint, e.g. `https://example.com/mcp`. */
  url: string | URL;
  /** Headers sent with every request (e.g. a static `Authorization`). */
  headers?: Record<string, string>;
  /**
   * OAuth sign-in: `createMcpOAuth(...)` signs each user in on their own
   * (tokens in your store; the server's tools come with `toolbox.forUser()`),
   * or any MCP SDK `OAuthClientProvider` (e.g. `ClientCredentialsProvider`)
   * for one identity shared by every user.
   */
  auth?: McpServerAuth;
  /**
   * Non-public addresses (IPs or CIDR ranges, e.g. `['10.0.0.0/8']`) that
   * sign-in may reach on origins other than `url`'s own. Discovery,
   * registration and token requests to private, loopback, link-local and
   * similar addresses are refused otherwise, wherever the server's OAuth
   * metadata points; `url`'s own origin is always allowed.
   */
  authAllowedAddresses?: readonly string[];
};

/**
 * Any other MCP transport (WebSocket, in-memory, ...). Called again on every
 * reconnect, so return a fresh transport each time.
 */
export type McpCustomServerConfig = McpServerLimits & {
  type?: 'custom';
  /** Creates a new, unstarted transport. */
  createTransport: () => Transport | Promise<Transport>;
};

/** How to reach one MCP server. */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig | McpCustomServerConfig;

/** How a crashed or disconnected server is brought back. */
export type McpReconnectOptions = {
  /** First retry delay; doubles per attempt (with jitter). */
  initialDelayMs?: number;
  /** Upper bound of one delay. */
  maxDelayMs?: number;
  /** Attempts before giving up (its tools are then removed). */
  maxAttempts?: number;
};

/**
 * `connecting` (first time), `ready`, `needs-auth` (the user has to sign in at
 * `authorizationUrl`; no tools until then), `reconnecting` (after a crash;
 * its tools fail fast), `failed` (gave up; no tools), `per-user` (signs in per
 * user: its tools come with `toolbox.forUser()`), `closed`.
 */
export type McpServerState =
  'connecting' | 'ready' | 'needs-auth' | 'reconnecting' | 'failed' | 'per-user' | 'closed';

/** A snapshot of one server. */
export type McpServerStatus = {
  name: string;
  state: McpServerState;
  /** Tools it currently contributes. */
  tools: number;
  /** The child's pid while a stdio server runs. */
  pid?: number;
  /** Why it is `failed`, `reconnecting` or `needs-auth`. */
  error?: Error;
  /** Reconnect attempts since it was last ready. */
  attempts: number;
  /** Where the user signs in, while `needs-auth`. */
  authorizationUrl?: string;
  /** The user this connection belongs to (servers with per-user `auth`). */
  userId?: string;
};

/** What one synchronisation of tools + index changed (final, namespaced names). */
export type McpSyncResult = {
  added: string[];
  updated: string[];
  removed: string[];
  unchanged: number;
  /** Tools handed to `index.upsert` (0 when nothing changed). */
  upserted: number;
  durationMs: number;
};

/** Lifecycle events, for logs and metrics; `userId` is set for per-user connections. */
export type McpEvent = { userId?: string } & (
  | { type: 'connected'; server: string; tools: number; pid?: number }
  | { type: 'connect-failed'; server: string; error: Error }
  | { type: 'disconnected'; server: string; error: Error }
  | { type: 'reconnecting'; server: string; attempt: number; delayMs: number }
  | { type: 'gave-up'; server: string; error: Error }
  | { type: 'needs-auth'; server: string; authorizationUrl?: string }
  | { type: 'authorized'; server: string }
  | { type: 'elicitation'; server: string; action: 'accept' | 'decline' | 'cancel' }
  | { type: 'list-changed'; server: string }
  | { type: 'relisted'; server: string; tools: number }
  | ({ type: 'synced' } & McpSyncResult)
  | { type: 'error'; server?: string; error: Error }
);
