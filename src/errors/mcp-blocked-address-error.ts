import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltMcpBlockedAddressError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * Signing in to an MCP server would have sent a request (metadata discovery,
 * client registration, token exchange or refresh) to an address on a private,
 * loopback, link-local or otherwise non-public network, or over a scheme
 * other than http(s): the server's OAuth metadata pointed there, and nothing
 * was sent. The server's own origin is always allowed; allow others on your
 * network with the server's `authAllowedAddresses`.
 *
 * @example
 * ```ts
 * if (McpBlockedAddressError.isInstance(error.cause)) console.warn(error.cause.url, error.cause.range);
 * ```
 */
export class McpBlockedAddressError extends ToolbeltError {
  private readonly [symbol] = true;
  /** The server's name (its key in `connectMcpServers({ servers })`). */
  readonly server: string;
  /** The refused URL's origin (never its path or query). */
  readonly url: string;
  /** The address it resolved to, when the refusal was about an address. */
  readonly address: string | undefined;
  /** Why: the address's range (`loopback`, `private`, `linkLocal`, `uniqueLocal`, ...) or `scheme`. */
  readonly range: string;

  constructor({
    server,
    url,
    address,
    range,
    message,
  }: {
    server: string;
    url: string;
    address?: string | undefined;
    range: string;
    message: string;
  }) {
    super({ name, message });
    this.server = server;
    this.url = url;
    this.address = address;
    this.range = range;
  }

  static override isInstance(error: unknown): error is McpBlockedAddressError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
