import { chmod } from 'node:fs/promises';
import {
  type IncomingMessage,
  type Server,
  type ServerResponse,
  createServer,
  request as httpRequest,
} from 'node:http';
import { type Socket, connect } from 'node:net';
import { checkTarget } from './check-target.ts';
import type { ResolvedEgress } from './egress-options.ts';
import { connectFailed, headerBytes, passOn, refusalText } from './proxy-messages.ts';
import type { EgressRefusal, SandboxNetworkUsage } from '../types.ts';
import { MAX_REFUSALS_KEPT } from './network-usage.ts';

type RunCounters = Omit<SandboxNetworkUsage, 'hosts'> & {
  hosts: Set<string>;
  /** Connections asked for (made or refused), for `maxConnectionsPerRun`. */
  attempts: number;
  overLimit: boolean;
};

/**
 * The host side of a container's egress: an HTTP proxy on a Unix socket (mounted into that
 * container only) that takes `CONNECT host:port` (TLS and other tunnels) and absolute-form
 * `http://` requests, checks each against the policy (`checkTarget`: allow-list, host-side
 * resolution, address ranges), connects to the checked address, and bounds what goes through:
 * connections at once and per run, bytes per run, idle time. It never follows redirects: a
 * redirect is a new request, checked like the first. Refusals answer 403 with the reason and
 * are counted for the run (`takeUsage`).
 *
 * @example
 * ```ts
 * const proxy = await EgressProxy.listen({ egress, path: '/run/x/proxy.sock' });
 * // ... the container runs code ...
 * const usage = proxy.takeUsage();
 * await proxy.close();
 * ```
 */
export class EgressProxy {
  private readonly egress: ResolvedEgress;
  private readonly onRefused: ((refusal: EgressRefusal) => void) | undefined;
  private readonly server: Server;
  /** Sockets of connections in progress (both ends), cut at the byte limit and on close. */
  private readonly live = new Set<Socket>();
  /** Every socket the container opened to the proxy (tunnels leave the server's care). */
  private readonly clients = new Set<Socket>();
  private readonly closing = new AbortController();
  private active = 0;
  private run = newRun();

  private constructor({
    egress,
    onRefused,
  }: {
    egress: ResolvedEgress;
    onRefused?: ((refusal: EgressRefusal) => void) | undefined;
  }) {
    this.egress = egress;
    this.onRefused = onRefused;
    this.server = createServer({ headersTimeout: egress.connectTimeoutMs, maxHeaderSize: 16_384 });
    // Bounds idle keep-alive connections from the container too.
    this.server.maxConnections = egress.maxConnections * 4;
    this.server.on('connection', (socket: Socket) => {
      this.clients.add(socket);
      socket.once('close', () => this.clients.delete(socket));
    });
    this.server.on('connect', (request: IncomingMessage, client: Socket, head: Buffer) => {
      void this.tunnel(request, client, head);
    });
    this.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      void this.forward(request, response);
    });
    this.server.on('clientError', (_error, socket: Socket) => {
      this.record({
        host: '(unreadable request)',
        port: 0,
        reason: 'bad-request',
        detail: 'not an HTTP request',
      });
      socket.destroy();
    });
  }

  /** Starts a proxy listening on the Unix socket `path` (made connectable by any uid). */
  static async listen({
    egress,
    path,
    onRefused,
  }: {
    /** The policy. */
    egress: ResolvedEgress;
    /** Socket path on the host. */
    path: string;
    /** Told about each refusal as it happens (telemetry). */
    onRefused?: (refusal: EgressRefusal) => void;
  }): Promise<EgressProxy> {
    const proxy = new EgressProxy({ egress, onRefused });
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(path, () => {
        proxy.server.off('error', reject);
        resolve();
      });
    });
    // The code runs as nobody (65534); the socket's directory is private to this container.
    await chmod(path, 0o666);
    return proxy;
  }

  /** What went through since the last call (the run or cell that just ended); starts afresh. */
  takeUsage(): SandboxNetworkUsage {
    const { attempts: _attempts, overLimit: _overLimit, hosts, ...counts } = this.run;
    this.run = newRun();
    return { ...counts, hosts: [...hosts] };
  }

  /** Stops listening and cuts every connection. */
  async close(): Promise<void> {
    this.closing.abort();
    for (const socket of [...this.live, ...this.clients]) socket.destroy();
    this.server.closeAllConnections();
    await new Promise<void>(resolve => this.server.close(() => resolve()));
  }

  private async tunnel(request: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    client.on('error', () => {});
    const target = /^(\[[0-9a-fA-F:.]+\]|[^:/\s[\]]+):(\d{1,5})$/.exec(request.url ?? '');
    if (target === null) {
      return this.refuseSocket(client, {
        host: (request.url ?? '').slice(0, 100),
        port: 0,
        reason: 'bad-request',
        detail: 'CONNECT needs host:port',
      });
    }
    const port = Number(target[2]);
    const admitted = await this.admit(target[1]!, port);
    if ('reason' in admitted) return this.refuseSocket(client, admitted);
    // Gone while its target was checked: nothing to connect for.
    if (client.destroyed) return void (this.active -= 1);
    const upstream = connect({ host: admitted.address, port });
    let connected = false;
    const release = this.track(client, upstream);
    upstream.setTimeout(this.egress.connectTimeoutMs, () => upstream.destroy());
    upstream.once('connect', () => {
      connected = true;
      this.opened(admitted.host, port);
      upstream.setTimeout(this.egress.idleTimeoutMs);
      client.setTimeout(this.egress.idleTimeoutMs, () => client.destroy());
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) {
        this.count('bytesSent', head.length);
        upstream.write(head);
      }
      client.on('data', (chunk: Buffer) => this.count('bytesSent', chunk.length));
      upstream.on('data', (chunk: Buffer) => this.count('bytesReceived', chunk.length));
      client.pipe(upstream);
      upstream.pipe(client);
    });
    upstream.on('error', () => {});
    upstream.once('close', () => {
      if (!connected && !client.destroyed) {
        this.refuseSocket(client, connectFailed(admitted.host, port), 502);
      }
      client.destroy();
      release();
    });
    client.once('close', () => upstream.destroy());
  }

  private async forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    request.on('error', () => {});
    let url: URL | undefined;
    try {
      url = new URL(request.url ?? '');
    } catch {
      // Reported below.
    }
    if (url?.protocol !== 'http:') {
      return this.refuseResponse(response, {
        host: url?.host ?? '(no host)',
        port: 0,
        reason: 'bad-request',
        detail: 'the proxy takes CONNECT host:port and absolute http:// requests only',
      });
    }
    const port = Number(url.port || 80);
    const admitted = await this.admit(url.hostname, port);
    if ('reason' in admitted) return this.refuseResponse(response, admitted);
    if (request.socket.destroyed) return void (this.active -= 1);
    const headers = passOn(request.headers);
    headers.host = url.host;
    let connected = false;
    const release = this.track(request.socket);
    response.once('close', release);
    const upstream = httpRequest({
      host: admitted.address,
      port,
      method: request.method,
      path: `${url.pathname}${url.search}`,
      headers,
      setHost: false,
      agent: false,
      timeout: this.egress.connectTimeoutMs,
    });
    upstream.on('socket', socket => {
      this.live.add(socket);
      if (this.closing.signal.aborted) socket.destroy();
      socket.once('close', () => this.live.delete(socket));
      socket.once('connect', () => {
        connected = true;
        this.opened(admitted.host, port);
        socket.setTimeout(this.egress.idleTimeoutMs);
      });
    });
    upstream.on('timeout', () => upstream.destroy());
    upstream.on('error', () => {
      if (!response.headersSent) {
        if (connected) response.writeHead(502).end();
        else this.refuseResponse(response, connectFailed(admitted.host, port), 502);
      } else {
        response.destroy();
      }
    });
    upstream.on('response', (answer: IncomingMessage) => {
      // Headers count too (about as sent): a server could otherwise send its payload in them.
      this.count('bytesReceived', headerBytes(answer.rawHeaders));
      answer.on('data', (chunk: Buffer) => this.count('bytesReceived', chunk.length));
      response.writeHead(answer.statusCode ?? 502, passOn(answer.headers));
      answer.pipe(response);
    });
    this.count('bytesSent', headerBytes(request.rawHeaders));
    request.on('data', (chunk: Buffer) => this.count('bytesSent', chunk.length));
    request.pipe(upstream);
  }

  /** Checks the limits and the target; a slot is held from here until `track`'s release. */
  private async admit(
    host: string,
    port: number,
  ): Promise<{ address: string; host: string } | EgressRefusal> {
    const asked = host.replace(/^\[|\]$/g, '');
    if (this.run.overLimit) {
      return {
        host: asked,
        port,
        reason: 'byte-limit',
        detail: `this run already moved ${this.egress.maxBytesPerRun} bytes`,
      };
    }
    if (this.active >= this.egress.maxConnections) {
      return {
        host: asked,
        port,
        reason: 'too-many-connections',
        detail: `${this.egress.maxConnections} connections are open already`,
      };
    }
    if (this.run.attempts >= this.egress.maxConnectionsPerRun) {
      return {
        host: asked,
        port,
        reason: 'too-many-connections',
        detail: `this run asked for ${this.egress.maxConnectionsPerRun} connections already`,
      };
    }
    this.run.attempts += 1;
    this.active += 1;
    const checked = await checkTarget({
      egress: this.egress,
      host: asked,
      port,
      abortSignal: this.closing.signal,
    });
    if ('reason' in checked) {
      this.active -= 1;
      return checked;
    }
    return { address: checked.address, host: asked.toLowerCase() };
  }

  /** Keeps the sockets of an admitted connection for cutting; the release frees its slot once. */
  private track(...sockets: Socket[]): () => void {
    for (const socket of sockets) this.live.add(socket);
    if (this.closing.signal.aborted) for (const socket of sockets) socket.destroy();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active -= 1;
      for (const socket of sockets) this.live.delete(socket);
    };
  }

  private opened(host: string, port: number): void {
    this.run.connections += 1;
    this.run.hosts.add(`${host}:${port}`);
  }

  private count(direction: 'bytesSent' | 'bytesReceived', bytes: number): void {
    this.run[direction] += bytes;
    if (
      this.run.overLimit ||
      this.run.bytesSent + this.run.bytesReceived <= this.egress.maxBytesPerRun
    )
      return;
    this.run.overLimit = true;
    this.record({
      host: '(all connections)',
      port: 0,
      reason: 'byte-limit',
      detail: `the run moved more than ${this.egress.maxBytesPerRun} bytes; its connections were cut`,
    });
    for (const socket of this.live) socket.destroy();
  }

  private record(refusal: EgressRefusal): void {
    this.run.refusedCount += 1;
    if (this.run.refused.length < MAX_REFUSALS_KEPT) this.run.refused.push(refusal);
    try {
      this.onRefused?.(refusal);
    } catch {
      // Telemetry must not break the proxy.
    }
  }

  private refuseSocket(client: Socket, refusal: EgressRefusal, status = 403): void {
    this.record(refusal);
    const body = refusalText(refusal);
    // Closed once written: a client that keeps its end open must not hold the socket.
    client.end(
      `HTTP/1.1 ${status} ${status === 403 ? 'Forbidden' : 'Bad Gateway'}\r\n` +
        `Content-Type: text/plain; charset=utf-8\r\nX-Ai-Toolbelt-Egress: ${refusal.reason}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      () => client.destroy(),
    );
  }

  private refuseResponse(response: ServerResponse, refusal: EgressRefusal, status = 403): void {
    this.record(refusal);
    const body = refusalText(refusal);
    response
      .writeHead(status, {
        'Content-Type': 'text/plain; charset=utf-8',
        'X-Ai-Toolbelt-Egress': refusal.reason,
        Connection: 'close',
      })
      .end(body);
  }
}

function newRun(): RunCounters {
  return {
    ...{ connections: 0, bytesSent: 0, bytesReceived: 0, hosts: new Set<string>() },
    ...{ refused: [], refusedCount: 0, attempts: 0, overLimit: false },
  };
}
