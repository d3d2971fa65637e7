// `ai-toolbelt/mcp`: kept off the root entry because stdio servers are child
// processes; the SDK's transports load only when a server of that kind connects. Its errors are
// also exported here (the same classes as the root entry's).
export { connectMcpServers, type ConnectMcpServersOptions } from './toolbox/connect-mcp-servers.ts';
export { McpToolbox } from './toolbox/mcp-toolbox.ts';
export type { McpAuthorizationRequest } from './toolbox/toolbox-options.ts';
export { createMcpOAuth, type McpOAuth, type McpOAuthOptions } from './auth/create-mcp-oauth.ts';
export type { SealedStoreStorage as McpAuthStore } from '../util/sealing/sealed-store.ts';
export type { McpServerAuth } from './auth/connection-auth.ts';
export type {
  McpElicitationHandler,
  McpElicitationRequest,
  McpElicitationResult,
} from './elicitation/elicitation.ts';
export {
  McpElicitationBroker,
  type McpElicitationBrokerOptions,
  type McpElicitationPart,
} from './elicitation/elicitation-broker.ts';
export type { McpNaming } from './catalog/tool-names.ts';
export type {
  McpCustomServerConfig,
  McpEvent,
  McpHttpServerConfig,
  McpReconnectOptions,
  McpServerConfig,
  McpServerLimits,
  McpServerState,
  McpServerStatus,
  McpStdioServerConfig,
  McpSyncResult,
  McpToolIndex,
} from './types.ts';
export {
  McpAuthorizationError,
  type McpAuthorizationReason,
} from '../errors/mcp-authorization-error.ts';
export { McpBlockedAddressError } from '../errors/mcp-blocked-address-error.ts';
export { McpConnectionError } from '../errors/mcp-connection-error.ts';
export { McpPaginationError } from '../errors/mcp-pagination-error.ts';
export { McpTimeoutError, type McpOperation } from '../errors/mcp-timeout-error.ts';
export { McpToolError } from '../errors/mcp-tool-error.ts';
