import { chmod } from 'node:fs/promises';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { type Socket, connect } from 'node:net';
import { checkTarget } from './check-target.ts';
import type { ResolvedEgress } from './egress-options.ts';
import { forwardRequest } from './forward-request.ts';
import { connectFailed, refuseOnResponse, refuseOnSocket } from './proxy-messages.ts';
import { ProxyUsage } from './proxy-usage.ts';
import { NO_HOST, UNREADABLE_HOST, refusalTarget } from './refusal-target.ts';
import type { EgressRefusal, SandboxNetworkUsage } from '../types.ts';

// `host:port` with a host made only of what a name or an IP literal has.
const CONNECT_TARGET = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/;

/**
 * The host side of a container's egress: an HTTP proxy on a Unix socket (mounted into that
 * container only) that takes `CONNECT host:port` (TLS and other tunnels) and absolute-form
 * `http://` requests, checks each against the policy (`checkTarget`: allow-list, host-side
 * resolution, address ranges), connects to the checked address, and bounds what goes through:
 * connections at once (each upstream connection counts until it is closed, and goes when its
 * client does) and per run, bytes per run, idle time on either side, and the wait for an
 * upstream's response head. It never follows redirects: a redirect is a new request, checked
 * like the first. Refusals answer 403 with the reason and are counted for the run (`takeUsage`).
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
  private readonly server: Server;
  private readonly usage: ProxyUsage;
  /** Sockets of connections in progress (both ends), cut at the byte limit and on close. */
  private readonly live = new Set<Socket>();
  /** Every socket the container opened to the proxy (tunnels leave the server's care). */
  private readonly clients = new Set<Socket>();
  private readonly closing = new AbortController();
  private active = 0;

  private constructor({
    egress,
    onRefused,
  }: {
    egress: ResolvedEgress;
    onRefused?: ((refusal: EgressRefusal) => void) | undefined;
  }) {
    this.egress = egress;
    this.usage = new ProxyUsage({
      maxBytesPerRun: egress.maxBytesPerRun,
      onRefused,
      onOverLimit: () => {
        for (const socket of this.live) socket.destroy();
      },
    });
    this.server = createServer({ headersTimeout: egress.connectTimeoutMs, maxHeaderSize: 16_384 });
    // Bounds idle keep-alive connections from the container too.
    this.server.maxConnections = egress.maxConnections * 4;
    // A client connection that moves no byte for this long is closed (a tunnel sets its own).
    this.server.timeout = egress.idleTimeoutMs;
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
      this.usage.record({
        host: UNREADABLE_HOST,
        port: 0,
        reason: 'bad-request',
        detail: 'not an HTTP request',
      });
      socket.destroy();
    });
  }

  /** Starts a proxy listening on the Unix socket `path`. */
  static async listen({
    egress,
    path,
    onRefused,
  }: {
    /** The policy. */
    egress: ResolvedEgress;
    /** Socket path on the host, in a directory only this process's user can enter. */
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
    // gVisor checks the socket's host mode against the code's uid (65534): it must be open to
    // others. Other host users are kept out by `egress.socketDir` (0700, see socket-directory.ts).
    await chmod(path, 0o666);
    return proxy;
  }

  /** What went through since the last call (the run or cell that just ended); starts afresh. */
  takeUsage(): SandboxNetworkUsage {
    return this.usage.take();
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
    const text = request.url ?? '';
    const target = CONNECT_TARGET.exec(text);
    if (target === null) {
      return this.refuseSocket(client, {
        ...refusalTarget(text),
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
    const release = this.hold(client, upstream);
    upstream.setTimeout(this.egress.connectTimeoutMs, () => upstream.destroy());
    upstream.once('connect', () => {
      connected = true;
      this.usage.opened(admitted.host, port);
      upstream.setTimeout(this.egress.idleTimeoutMs);
      client.setTimeout(this.egress.idleTimeoutMs, () => client.destroy());
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) {
        this.usage.count('bytesSent', head.length);
        upstream.write(head);
      }
      client.on('data', (chunk: Buffer) => this.usage.count('bytesSent', chunk.length));
      upstream.on('data', (chunk: Buffer) => this.usage.count('bytesReceived', chunk.length));
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
        ...(url === undefined ? { host: NO_HOST, port: 0 } : refusalTarget(url.host)),
        reason: 'bad-request',
        detail: 'the proxy takes CONNECT host:port and absolute http:// requests only',
      });
    }
    const port = Number(url.port || 80);
    const admitted = await this.admit(url.hostname, port);
    if ('reason' in admitted) return this.refuseResponse(response, admitted);
    if (request.socket.destroyed) return void (this.active -= 1);
    forwardRequest({
      ...{ request, response, url, port, admitted, egress: this.egress, usage: this.usage },
      release: this.hold(request.socket),
      live: this.live,
      closing: this.closing.signal,
      refuse: (refusal, status) => this.refuseResponse(response, refusal, status),
    });
  }

  /** Checks the limits and the target; a slot is held from here until `hold`'s release. */
  private async admit(
    host: string,
    port: number,
  ): Promise<{ address: string; host: string } | EgressRefusal> {
    const asked = host.replace(/^\[|\]$/g, '');
    if (this.usage.overLimit) {
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
    if (this.usage.attempts >= this.egress.maxConnectionsPerRun) {
      return {
        host: asked,
        port,
        reason: 'too-many-connections',
        detail: `this run asked for ${this.egress.maxConnectionsPerRun} connections already`,
      };
    }
    this.usage.attempt();
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
  private hold(...sockets: Socket[]): () => void {
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

  private refuseSocket(client: Socket, refusal: EgressRefusal, status = 403): void {
    refuseOnSocket(client, this.usage.record(refusal), status);
  }

  private refuseResponse(response: ServerResponse, refusal: EgressRefusal, status = 403): void {
    refuseOnResponse(response, this.usage.record(refusal), status);
  }
}
