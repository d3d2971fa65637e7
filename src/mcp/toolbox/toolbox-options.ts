import type { McpElicitationHandler } from '../elicitation/elicitation.ts';
import type { McpConnectionSettings } from '../connection/connection-settings.ts';
import type { McpServerConnection } from '../connection/server-connection.ts';
import type { McpSharedCatalog } from '../catalog/shared-tool-catalog.ts';
import type { McpNaming } from '../catalog/tool-names.ts';
import type { McpEvent, McpServerConfig, McpToolIndex } from '../types.ts';

/** The user has to sign in to a server: what `onAuthorizationRequired` receives. */
export type McpAuthorizationRequest = {
  /** The server's name. */
  server: string;
  /** Whose sign-in (per-user servers). */
  userId?: string;
  /** Where to send the user; undefined if the provider produced none. */
  url?: string;
};

/** Everything a toolbox is made of; `connectMcpServers()` fills it in. */
export type McpToolboxOptions<TIndex extends McpToolIndex> = {
  /** Servers by name. */
  servers: Record<string, McpServerConfig>;
  /** Index to keep in step. */
  index: TIndex;
  /** Defaults for every server (a server's own limits win). */
  settings: McpConnectionSettings;
  /** See {@link McpNaming}. */
  naming: McpNaming;
  /** Lifecycle events. */
  onEvent: (event: McpEvent) => void;
  /** Told when a user has to sign in. */
  onAuthorizationRequired?: ((request: McpAuthorizationRequest) => void) | undefined;
  /** Answers servers' elicitations (declined without it). */
  onElicitation?: McpElicitationHandler | undefined;
  /** The user of this toolbox; per-user servers connect only with one. */
  userId?: string | undefined;
  /** Per-user toolboxes unused this long are closed. */
  userIdleTimeoutMs: number;
  /** For `forUser()` toolboxes: the process-wide toolbox's shared servers and catalog. */
  parent?: McpToolboxParent | undefined;
};

/** What a `forUser()` toolbox gets from the process-wide one. */
export type McpToolboxParent = {
  /** The shared servers' connections (not closed by the per-user toolbox). */
  borrowed: McpServerConnection[];
  /** Names and index entries shared by every toolbox. */
  shared: McpSharedCatalog;
  /** Called when it closes. */
  onClose: () => void;
  /** Called on each tool call (idle eviction). */
  onUse: () => void;
};
