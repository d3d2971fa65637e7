import { type IncomingMessage, type ServerResponse, request as httpRequest } from 'node:http';
import type { Socket } from 'node:net';
import type { ResolvedEgress } from './egress-options.ts';
import { connectFailed, headerBytes, passOn } from './proxy-messages.ts';
import type { ProxyUsage } from './proxy-usage.ts';
import type { EgressRefusal } from '../types.ts';

/**
 * Sends one admitted absolute-form `http://` request on to the checked address and its answer
 * back. The upstream connection belongs to the client's request: it is destroyed when the
 * client's response closes (the client left, or the answer is done), and the slot (`release`)
 * is given back only once both are closed, so `maxConnections` counts every upstream connection
 * still open. Once the request is sent, the server has `headersTimeoutMs` to start its answer
 * (else 504); a connection that moves no byte for `idleTimeoutMs` is closed (the client's side by
 * the proxy's server timeout).
 *
 * @example
 * ```ts
 * forwardRequest({ request, response, url, port, admitted, egress, usage, release, live, closing, refuse });
 * ```
 */
export function forwardRequest({
  request,
  response,
  url,
  port,
  admitted,
  egress,
  usage,
  release,
  live,
  closing,
  refuse,
}: {
  /** The client's request and its response. */
  request: IncomingMessage;
  response: ServerResponse;
  /** The request's absolute URL and port. */
  url: URL;
  port: number;
  /** The checked address, and the host as asked. */
  admitted: { address: string; host: string };
  /** The policy (timeouts). */
  egress: ResolvedEgress;
  /** The run's counters. */
  usage: ProxyUsage;
  /** Gives the slot back (once). */
  release: () => void;
  /** The proxy's sockets to cut at the byte limit and on close. */
  live: Set<Socket>;
  /** Aborted when the proxy closes. */
  closing: AbortSignal;
  /** Answers with a recorded refusal. */
  refuse: (refusal: EgressRefusal, status: number) => void;
}): void {
  const headers = passOn(request.headers);
  headers.host = url.host;
  let connected = false;
  let clientGone = false;
  let headersLate = false;
  let headersTimer: NodeJS.Timeout | undefined;
  // The slot is the client's response and the upstream connection: it is free once both closed.
  let open = 2;
  const closed = () => {
    open -= 1;
    if (open === 0) release();
  };
  const upstream = httpRequest({
    host: admitted.address,
    port,
    method: request.method,
    path: `${url.pathname}${url.search}`,
    headers,
    setHost: false,
    agent: false,
    timeout: egress.connectTimeoutMs,
  });
  let socketSeen = false;
  upstream.on('socket', (socket: Socket) => {
    socketSeen = true;
    live.add(socket);
    if (closing.aborted || clientGone) socket.destroy();
    socket.once('close', () => {
      live.delete(socket);
      closed();
    });
    socket.once('connect', () => {
      connected = true;
      usage.opened(admitted.host, port);
      socket.setTimeout(egress.idleTimeoutMs);
    });
  });
  upstream.once('close', () => {
    clearTimeout(headersTimer);
    // Destroyed before it had a socket: no connection was made.
    if (!socketSeen) closed();
  });
  response.once('close', () => {
    clientGone = true;
    upstream.destroy();
    closed();
  });
  upstream.once('finish', () => {
    headersTimer = setTimeout(() => {
      headersLate = true;
      upstream.destroy();
    }, egress.headersTimeoutMs);
  });
  upstream.on('timeout', () => upstream.destroy());
  upstream.on('error', () => {
    if (clientGone) return;
    if (response.headersSent) return void response.destroy();
    if (headersLate) {
      response
        .writeHead(504, { 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close' })
        .end(
          `ai-toolbelt sandbox egress: ${admitted.host}:${port} sent no response head within ${egress.headersTimeoutMs} ms.\n`,
        );
    } else if (connected) {
      response.writeHead(502, { Connection: 'close' }).end();
    } else {
      refuse(connectFailed(admitted.host, port), 502);
    }
  });
  upstream.on('response', (answer: IncomingMessage) => {
    clearTimeout(headersTimer);
    // Headers count too (about as sent): a server could otherwise send its payload in them.
    usage.count('bytesReceived', headerBytes(answer.rawHeaders));
    answer.on('data', (chunk: Buffer) => usage.count('bytesReceived', chunk.length));
    answer.on('error', () => {});
    response.writeHead(answer.statusCode ?? 502, passOn(answer.headers));
    answer.pipe(response);
  });
  usage.count('bytesSent', headerBytes(request.rawHeaders));
  request.on('data', (chunk: Buffer) => usage.count('bytesSent', chunk.length));
  request.pipe(upstream);
}
