import { rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import type Docker from 'dockerode';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import { SandboxClosedError } from '../../errors/sandbox-closed-error.ts';
import type { CleanupTracker } from '../driver/cleanup-tracker.ts';
import { pythonSource } from '../in-container/python-source.ts';
import type { ResolvedEgress } from './egress-options.ts';
import { EgressProxy } from './egress-proxy.ts';
import { makeProxyDirectory, secureSocketDir } from './socket-directory.ts';
import { dockerCall } from '../docker/docker-call.ts';
import { EXPIRES_LABEL } from '../driver/labels.ts';
import type { SandboxNetworkUsage } from '../types.ts';

/** Where a container finds its proxy's socket (its directory is the only host path mounted). */
export const EGRESS_MOUNT = '/run/ai-toolbelt-egress';
/** The port the in-container forwarder listens on (127.0.0.1 in the container's own stack). */
export const EGRESS_PORT = 3128;

/** One container's egress: its proxy and the directory holding its socket. */
export type EgressLink = {
  readonly proxy: EgressProxy;
  /** Stops the proxy and removes its directory unless told to keep it (idempotent). */
  close(options?: { keepDirectory?: boolean }): Promise<void>;
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
  private readonly links = new Map<string, EgressLink>();
  private readonly live = new Set<EgressLink>();
  private closed = false;

  constructor({
    egress,
  }: {
    /** The policy. */
    egress: ResolvedEgress;
  }) {
    this.egress = egress;
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
    if (this.closed) throw new SandboxClosedError();
    let dir: string;
    try {
      dir = await makeProxyDirectory(this.egress.socketDir);
    } catch (error) {
      if (InvalidArgumentError.isInstance(error)) throw error;
      throw new InvalidArgumentError({
        argument: 'egress.socketDir',
        value: this.egress.socketDir,
        message: `cannot make a proxy socket directory there (${(error as Error).message}); pass a directory this process can write and dockerd can see`,
      });
    }
    let link: EgressLink;
    try {
      link = await this.listenAt({ dir, ttlMs });
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
    return { spec: this.patch({ spec, dir, runtime }), link };
  }

  /**
   * Takes over the proxy of an interpreter another process started (a replica that served its
   * earlier cells, and may have stopped since): when nothing answers on its socket, this process
   * listens there, so the interpreter keeps its network. Only directories under `socketDir` are
   * taken over. Returns the usage reader (see `usage`), or undefined when the container has no
   * egress mount or another process still serves its socket.
   */
  async adopt({
    container,
    dockerTimeoutMs,
    cleanup,
  }: {
    /** The interpreter's container. */
    container: Docker.Container;
    /** Deadline of the inspect call. */
    dockerTimeoutMs: number;
    /** Its engine's removals: the proxy goes with the container. */
    cleanup: CleanupTracker;
  }): Promise<(() => SandboxNetworkUsage) | undefined> {
    const known = this.usage(container.id);
    if (known !== undefined || this.closed) return known;
    const info = await dockerCall({
      operation: 'container inspect',
      timeoutMs: dockerTimeoutMs,
      call: abortSignal => container.inspect({ abortSignal }),
    });
    const dir = info.Mounts?.find(mount => mount.Destination === EGRESS_MOUNT)?.Source;
    if (dir === undefined || dirname(dir) !== (await secureSocketDir(this.egress.socketDir))) {
      return undefined;
    }
    const path = join(dir, 'proxy.sock');
    if (await answers(path)) return undefined;
    await rm(path, { force: true });
    const expires = Number(info.Config?.Labels?.[EXPIRES_LABEL]);
    const link = await this.listenAt({
      dir,
      ttlMs: Number.isFinite(expires) ? Math.max(0, expires - Date.now()) : 0,
    });
    // Raced by another replica: whichever listened last serves; this one goes.
    if (this.usage(container.id) !== undefined) {
      await link.close({ keepDirectory: true });
    } else {
      this.bind(container.id, link);
      cleanup.whenRemoved(container.id, () => this.release(container.id));
    }
    return this.usage(container.id);
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

  /**
   * Closes every proxy. Those of `keep` (interpreters another replica serves) keep their socket's
   * directory, mounted in the container, so that replica can take the proxy over (`adopt`).
   */
  async close({ keep }: { keep?: ReadonlySet<string> } = {}): Promise<void> {
    this.closed = true;
    const kept = new Set(
      [...this.links].filter(([id]) => keep?.has(id) === true).map(([, link]) => link),
    );
    this.links.clear();
    await Promise.all([...this.live].map(link => link.close({ keepDirectory: kept.has(link) })));
  }

  private async listenAt({ dir, ttlMs }: { dir: string; ttlMs: number }): Promise<EgressLink> {
    const proxy = await EgressProxy.listen({ egress: this.egress, path: join(dir, 'proxy.sock') });
    let closing: Promise<void> | undefined;
    const timer = setTimeout(() => void link.close(), ttlMs + 30_000);
    timer.unref();
    const link: EgressLink = {
      proxy,
      close: ({ keepDirectory = false } = {}) => {
        closing ??= (async () => {
          clearTimeout(timer);
          try {
            await proxy.close();
          } finally {
            if (!keepDirectory) await rm(dir, { recursive: true, force: true });
            // Only now: the gateway's close() waits for links already closing.
            this.live.delete(link);
          }
        })();
        return closing;
      },
    };
    this.live.add(link);
    return link;
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
      // The code's own servers on its loopback are reached directly, not through the proxy.
      'NO_PROXY=localhost,127.0.0.1,::1',
      'no_proxy=localhost,127.0.0.1,::1',
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
        // A mount, not a bind string: Docker creates a missing bind source silently (an empty
        // directory, no network), but refuses a missing mount source, e.g. when this process's
        // /tmp is private (systemd PrivateTmp) and not the one dockerd sees.
        Mounts: [
          ...(spec.HostConfig?.Mounts ?? []),
          { Type: 'bind', Source: dir, Target: EGRESS_MOUNT, ReadOnly: true },
        ],
      },
    };
  }
}

/** Whether a process listens on the Unix socket `path` (within a second). */
function answers(path: string): Promise<boolean> {
  return new Promise(resolve => {
    const socket = connect(path);
    const done = (listening: boolean) => {
      socket.destroy();
      resolve(listening);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
