import type { McpElicitationHandler } from '../elicitation/elicitation.ts';
import type { McpEvent, McpServerConfig } from '../types.ts';

/** Resolved settings of one server (defaults applied). */
export type McpConnectionSettings = {
  connectTimeoutMs: number;
  listTimeoutMs: number;
  callTimeoutMs: number;
  maxPages: number;
  listChangedDebounceMs: number;
  reconnect: { initialDelayMs: number; maxDelayMs: number; maxAttempts: number };
  elicitationTimeoutMs: number;
  elicitationModes: readonly ('form' | 'url')[];
};

/**
 * One server's settings: the toolbox's defaults with the limits its config
 * sets (a limit left `undefined` keeps the default).
 *
 * @example
 * ```ts
 * const settings = serverSettings({ defaults, config: { command: 'mcp-fs', callTimeoutMs: 5_000 } });
 * ```
 */
export function serverSettings({
  defaults,
  config,
}: {
  /** The toolbox's settings. */
  defaults: McpConnectionSettings;
  /** The server's config. */
  config: McpServerConfig;
}): McpConnectionSettings {
  const limits: Partial<McpConnectionSettings> = {};
  for (const key of ['connectTimeoutMs', 'listTimeoutMs', 'callTimeoutMs', 'maxPages'] as const) {
    const value = config[key];
    if (value !== undefined) limits[key] = value;
  }
  return { ...defaults, ...limits };
}

/** What an `McpServerConnection` is made of. */
export type McpServerConnectionOptions = {
  /** The server's name. */
  name: string;
  /** How to reach it. */
  config: McpServerConfig;
  /** Limits, debounce and reconnect policy. */
  settings: McpConnectionSettings;
  /** Called when the tool list may have changed. */
  onTools: () => void;
  /** Lifecycle events. */
  onEvent: (event: McpEvent) => void;
  /** The user, for servers with per-user `auth`. */
  userId?: string | undefined;
  /** Answers the server's elicitations (declined without it). */
  onElicitation?: McpElicitationHandler | undefined;
  /** Told when the user has to sign in. */
  onAuthorizationRequired?: ((url: string | undefined) => void) | undefined;
};
