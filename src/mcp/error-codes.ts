// MCP's JSON-RPC error codes, checked structurally so callers need not load the SDK.

/** True for MCP's `RequestTimeout` (-32001); the SDK also uses it for aborted requests. */
export function isRequestTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === -32001;
}

/** True for MCP's `ConnectionClosed` (-32000): the transport went away mid-request. */
export function isConnectionClosed(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === -32000;
}

/**
 * True when the MCP SDK's HTTP transport gave up for want of authorization
 * (its `UnauthorizedError`, possibly wrapped as a `cause`): the user has to
 * sign in. Checked by name so callers need not load the SDK's auth module.
 */
export function isUnauthorized(error: unknown): boolean {
  for (let e = error, depth = 0; e != null && depth < 5; depth++) {
    if ((e as { constructor?: { name?: string } }).constructor?.name === 'UnauthorizedError')
      return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
