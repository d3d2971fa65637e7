import { randomBytes } from 'node:crypto';
import { chmod, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { pythonSource } from '../in-container/python-source.ts';
import type { ResolvedEgress } from './egress-options.ts';
import { EgressProxy } from './egress-proxy.ts';
import type { EgressRefusal, SandboxNetworkUsage } from './network-usage.ts';

/** Where a container finds its proxy's socket (its directory is the only host path mounted). */
export const EGRESS_MOUNT = '/run/ai-toolbelt-egress';
/** The port the in-container forwarder listens on (127.0.0.1 in the container's own stack). */
export const EGRESS_PORT = 3128;

/** One container's egress: its proxy and the directory holding its socket. */
export type EgressLink = {
  readonly proxy: EgressProxy;
  /** Stops the proxy and removes its directory (idempotent). */
  close(): Promise<void>;
};

/**
 * A sandbox's egress: for each container that may use the network, a proxy of its own on a
 * fresh Unix socket (so one container cannot reach another's, and every refusal is that
 * container's run's), mounted read-only into it, plus what the container needs to use it: the
 * egress runtime, the forwarder's port, proxy and pip settings. A link closes when its
 * container is removed, at the container's TTL at the latest, and when the gateway closes.
 *
 * @example
 * ```ts
 * const gateway = new EgressGateway({ egress: resolveEgressOptions({ allow: ['pypi.org'] }) });
 * const { spec, link } = await gateway.open({ spec: body, ttlMs: 60_000 });
 * ```
 */
export class EgressGateway {
  readonly egress: ResolvedEgress;
  private readonly onRefused: ((refusal: EgressRefusal) => void) | undefined;
  private readonly links = new Map<string, EgressLink>();
  private readonly live = new Set<EgressLink>();
  private closed = false;

  constructor({
    egress,
    onRefused,
  }: {
    /** The policy. */
    egress: ResolvedEgress;
    /** Told about every refusal of every container (telemetry). */
    onRefused?: (refusal: EgressRefusal) => void;
  }) {
    this.egress = egress;
    this.onRefused = onRefused;
  }

  /**
   * A proxy for a container about to be created, and `spec` changed to use it (the egress
   * runtime unless `runtime` says the engine has no gVisor, the socket's directory mounted,
   * the environment).
   */
  async open({
    spec,
    ttlMs,
    runtime,
  }: {
    /** The create body (`containerSpec`). */
    spec: Docker.ContainerCreateOptions;
    /** The container's life bound: the link closes then at the latest. */
    ttlMs: number;
    /** The runtime to use instead of the egress runtime (the runc opt-in), if any. */
    runtime?: string | undefined;
  }): Promise<{ spec: Docker.ContainerCreateOptions; link: EgressLink }> {
    if (this.closed) throw new Error('the egress gateway is closed');
    // 0711: other host users cannot list the per-container directories (their names are random).
    await mkdir(this.egress.socketDir, { recursive: true, mode: 0o711 });
    const dir = join(this.egress.socketDir, randomBytes(12).toString('hex'));
    await mkdir(dir, { mode: 0o755 });
    await chmod(dir, 0o755);
    let proxy: EgressProxy;
    try {
      proxy = await EgressProxy.listen({
        egress: this.egress,
        path: join(dir, 'proxy.sock'),
        ...(this.onRefused ? { onRefused: this.onRefused } : {}),
      });
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
    let closing: Promise<void> | undefined;
    const timer = setTimeout(() => void link.close(), ttlMs + 30_000);
    timer.unref();
    const link: EgressLink = {
      proxy,
      close: () => {
        closing ??= (async () => {
          clearTimeout(timer);
          try {
            await proxy.close();
          } finally {
            await rm(dir, { recursive: true, force: true });
            // Only now: the gateway's close() waits for links already closing.
            this.live.delete(link);
          }
        })();
        return closing;
      },
    };
    this.live.add(link);
    return { spec: this.patch({ spec, dir, runtime }), link };
  }

  /** Records which container a link serves, so runs and cells find their usage. */
  bind(containerId: string, link: EgressLink): void {
    this.links.set(containerId, link);
  }

  /** Closes the link of a removed container. */
  release(containerId: string): void {
    const link = this.links.get(containerId);
    this.links.delete(containerId);
    void link?.close();
  }

  /**
   * Reads what the container's code did on the network since the last read; taken before a
   * run, as the link goes once the container is removed. `undefined` when this process holds
   * no proxy for the container (another replica started it).
   */
  usage(containerId: string): (() => SandboxNetworkUsage) | undefined {
    const proxy = this.links.get(containerId)?.proxy;
    return proxy && (() => proxy.takeUsage());
  }

  /** Closes every proxy. */
  async close(): Promise<void> {
    this.closed = true;
    this.links.clear();
    await Promise.all([...this.live].map(link => link.close()));
  }

  private patch({
    spec,
    dir,
    runtime,
  }: {
    spec: Docker.ContainerCreateOptions;
    dir: string;
    runtime: string | undefined;
  }): Docker.ContainerCreateOptions {
    const proxyUrl = `http://127.0.0.1:${EGRESS_PORT}`;
    const index = this.egress.pythonIndexUrl;
    const env = [
      `AI_TOOLBELT_EGRESS_SOCKET=${EGRESS_MOUNT}/proxy.sock`,
      `AI_TOOLBELT_EGRESS_PORT=${EGRESS_PORT}`,
      `AI_TOOLBELT_EGRESS_FORWARDER=${pythonSource('egress_forwarder')}`,
      ...['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy'].map(
        name => `${name}=${proxyUrl}`,
      ),
      // pip installs for the code's user under HOME=/tmp, the only writable place; the image's
      // own packages are read-only, which is what PEP 668's marker protects.
      'PIP_USER=1',
      'PIP_BREAK_SYSTEM_PACKAGES=1',
      'PIP_DISABLE_PIP_VERSION_CHECK=1',
      'PIP_NO_CACHE_DIR=1',
      'PIP_NO_INPUT=1',
      'PIP_PROGRESS_BAR=off',
      ...(index === undefined ? [] : [`PIP_INDEX_URL=${index}`]),
      ...(index?.startsWith('http:') ? [`PIP_TRUSTED_HOST=${new URL(index).host}`] : []),
    ];
    return {
      ...spec,
      Env: [...(spec.Env ?? []), ...env],
      HostConfig: {
        ...spec.HostConfig,
        Runtime: runtime ?? this.egress.runtime,
        Binds: [...(spec.HostConfig?.Binds ?? []), `${dir}:${EGRESS_MOUNT}:ro`],
      },
    };
  }
}
