// The proxy's HTTP messages: refusals and the headers it passes on.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { EgressRefusal } from '../types.ts';

// Hop-by-hop headers (RFC 9110 7.6.1) and the proxy's own: never passed on.
const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** The refusal for an allowed host that did not take the connection. */
export function connectFailed(host: string, port: number): EgressRefusal {
  return {
    host,
    port,
    reason: 'connect-failed',
    detail: 'the allowed host did not accept the connection',
  };
}

/** The body of a refusal: one line naming the target and why. */
export function refusalText(refusal: EgressRefusal): string {
  const target = refusal.port === 0 ? refusal.host : `${refusal.host}:${refusal.port}`;
  return `ai-toolbelt sandbox egress refused ${target}: ${refusal.detail}.\n`;
}

/** The headers a request or response is passed on with: no hop-by-hop or proxy headers. */
export function passOn(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  const named = String(headers.connection ?? '')
    .split(',')
    .map(name => name.trim().toLowerCase());
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.includes(name)) continue;
    kept[name] = value;
  }
  return kept;
}

/** The bytes of a message's header lines (`name: value\r\n` each), from Node's raw list. */
export function headerBytes(raw: readonly string[]): number {
  let bytes = 0;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    bytes += Buffer.byteLength(raw[i]!) + Buffer.byteLength(raw[i + 1]!) + 4;
  }
  return bytes;
}

/** Answers a refused CONNECT on its raw socket and closes it. */
export function refuseOnSocket(client: Socket, refusal: EgressRefusal, status = 403): void {
  const body = refusalText(refusal);
  // Closed once written: a client that keeps its end open must not hold the socket.
  client.end(
    `HTTP/1.1 ${status} ${status === 403 ? 'Forbidden' : 'Bad Gateway'}\r\n` +
      `Content-Type: text/plain; charset=utf-8\r\nX-Ai-Toolbelt-Egress: ${refusal.reason}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    () => client.destroy(),
  );
}

/** Answers a refused absolute-form request (the connection closes after it). */
export function refuseOnResponse(
  response: ServerResponse,
  refusal: EgressRefusal,
  status = 403,
): void {
  response
    .writeHead(status, {
      'Content-Type': 'text/plain; charset=utf-8',
      'X-Ai-Toolbelt-Egress': refusal.reason,
      Connection: 'close',
    })
    .end(refusalText(refusal));
}
