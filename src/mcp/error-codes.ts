// MCP's JSON-RPC error codes, checked structurally so callers need not load the SDK.

/** True for MCP's `RequestTimeout` (-32001); the SDK also uses it for aborted requests. */
export function isRequestTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === -32001;
}

/** True for MCP's `ConnectionClosed` (-32000): the transport went away mid-request. */
export function isConnectionClosed(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === -32000;
}
