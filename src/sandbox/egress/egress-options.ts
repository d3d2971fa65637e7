// egress/: what sandboxed code may reach over the network: the allow-list, the check of each
// connection, the proxy each container gets on a Unix socket, and what a run reports.
import { lookup } from 'node:dns/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import { EgressRules, type EgressRule } from './egress-rules.ts';
import { checkMinimums } from '../../util/check-minimums.ts';

/**
 * What sandboxed code may reach over the network. Off by default: without it a container has
 * no network at all. With it, the container still has no network interface; its only way out is
 * a proxy on the host (one per container, on a Unix socket mounted into it) that checks every
 * connection against `allow` after resolving the name on the host, and refuses non-public
 * addresses unless a rule allows them.
 *
 * @example
 * ```ts
 * const sandbox = new DockerSandbox({
 *   egress: { allow: ['pypi.org', 'files.pythonhosted.org'], pythonIndexUrl: 'https://pypi.org/simple' },
 * });
 * ```
 */
export type EgressOptions = {
  /**
   * Hosts and ports code may reach: `'host'`, `'host:port'`, `'*.suffix'` (names under
   * `suffix`, not `suffix` itself), an IP literal, or `'*'` (any public host); the port defaults
   * to 443. A rule object can also let a name resolve to private addresses (an index on your
   * network).
   */
  allow: ReadonlyArray<string | EgressRule>;
  /**
   * The package index `pip install` uses (a PEP 503 "simple" URL, e.g. a devpi or Artifactory
   * mirror); its host and port must be allowed. Without it pip uses pypi.org, which must then be
   * allowed with files.pythonhosted.org.
   */
  pythonIndexUrl?: string;
  /** Connections open at once per container; more are refused. */
  maxConnections?: number;
  /** Connections per run or cell; more are refused. */
  maxConnectionsPerRun?: number;
  /** Bytes both ways per run or cell; past it the run's connections are cut. */
  maxBytesPerRun?: number;
  /** Deadline to resolve a name and connect to it. */
  connectTimeoutMs?: number;
  /** A connection that moves no byte for this long is closed (the code's side and the server's). */
  idleTimeoutMs?: number;
  /**
   * Time a server has to start its answer (the response head) to a plain `http://` request,
   * once the request is sent; past it the code gets a 504.
   */
  headersTimeoutMs?: number;
  /**
   * Resolves a host name to IP addresses (default: the system resolver, every address). Every
   * address must be allowed; the connection goes to the first, so a name cannot resolve to a
   * checked address and then connect to another.
   */
  resolve?: (hostname: string) => Promise<readonly string[]>;
  /**
   * Docker runtime of containers with egress: gVisor with `--network=none --host-uds=open` (it
   * may open the proxy's socket, the only host socket mounted), registered by setup-sandbox.
   */
  runtime?: string;
  /**
   * Host directory under which each container's proxy socket is made (default
   * `<tmpdir>/ai-toolbelt-egress-<uid>`). dockerd must see it at the same path: with a private
   * /tmp (systemd `PrivateTmp`), pick a directory outside it. It must be this user's and no one
   * else's to enter (made `0700`), with no symbolic link on the path and no parent another user
   * could change (`InvalidArgumentError` otherwise): other host users then reach no proxy.
   */
  socketDir?: string;
};

/** `EgressOptions` checked, with defaults. */
export type ResolvedEgress = {
  rules: EgressRules;
  pythonIndexUrl: string | undefined;
  maxConnections: number;
  maxConnectionsPerRun: number;
  maxBytesPerRun: number;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  headersTimeoutMs: number;
  resolve: (hostname: string) => Promise<readonly string[]>;
  runtime: string;
  socketDir: string;
};

const systemResolve = async (hostname: string): Promise<string[]> =>
  (await lookup(hostname, { all: true, verbatim: true })).map(found => found.address);

/** Checks `egress` (`InvalidArgumentError` naming the option) and fills in defaults. */
export function resolveEgressOptions(egress: EgressOptions): ResolvedEgress {
  if (egress === null || typeof egress !== 'object') {
    throw new InvalidArgumentError({
      argument: 'egress',
      value: egress,
      message: 'expected { allow: [...] }, e.g. { allow: ["pypi.org", "files.pythonhosted.org"] }',
    });
  }
  const {
    allow,
    pythonIndexUrl,
    maxConnections = 16,
    maxConnectionsPerRun = 256,
    maxBytesPerRun = 256 * 1024 * 1024,
    connectTimeoutMs = 10_000,
    idleTimeoutMs = 30_000,
    headersTimeoutMs = 30_000,
    resolve = systemResolve,
    runtime = 'runsc-egress',
    // Per user: the first user to make a shared one would own it.
    socketDir = join(tmpdir(), `ai-toolbelt-egress-${process.getuid?.() ?? 'user'}`),
  } = egress;
  const rules = EgressRules.parse(allow);
  checkMinimums(
    [
      ['maxConnections', maxConnections, 1],
      ['maxConnectionsPerRun', maxConnectionsPerRun, 1],
      ['maxBytesPerRun', maxBytesPerRun, 1],
      ['connectTimeoutMs', connectTimeoutMs, 1],
      ['idleTimeoutMs', idleTimeoutMs, 1],
      ['headersTimeoutMs', headersTimeoutMs, 1],
    ],
    { prefix: 'egress.' },
  );
  if (typeof resolve !== 'function') {
    throw new InvalidArgumentError({
      argument: 'egress.resolve',
      value: resolve,
      message: 'must be a function from a host name to its IP addresses',
    });
  }
  if (typeof runtime !== 'string' || !/^[\w.-]+$/.test(runtime)) {
    throw new InvalidArgumentError({
      argument: 'egress.runtime',
      value: runtime,
      message: 'must be the name of a Docker runtime, e.g. "runsc-egress"',
    });
  }
  if (typeof socketDir !== 'string' || !isAbsolute(socketDir)) {
    throw new InvalidArgumentError({
      argument: 'egress.socketDir',
      value: socketDir,
      message: 'must be an absolute path on the Docker engine host',
    });
  }
  return {
    rules,
    pythonIndexUrl: pythonIndexUrl === undefined ? undefined : checkIndex(pythonIndexUrl, rules),
    ...{ maxConnections, maxConnectionsPerRun, maxBytesPerRun, connectTimeoutMs, idleTimeoutMs },
    headersTimeoutMs,
    ...{ resolve, runtime, socketDir },
  };
}

function checkIndex(value: unknown, rules: EgressRules): string {
  const fail = (message: string): never => {
    throw new InvalidArgumentError({ argument: 'egress.pythonIndexUrl', value, message });
  };
  let url: URL | undefined;
  try {
    url = new URL(String(value));
  } catch {
    // Reported below.
  }
  if (typeof value !== 'string' || url === undefined) {
    return fail('must be an http(s) URL of a package index, e.g. "https://pypi.org/simple"');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return fail(`must be an http(s) URL; got ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '') {
    // The URL is put in the container's environment, where the code reads it.
    return fail(
      'must not carry credentials: the code in the sandbox could read them; use an index that needs none',
    );
  }
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  if (rules.match(url.hostname, port) === undefined) {
    return fail(
      `its host ${url.hostname}:${port} is not on egress.allow; add "${url.hostname}:${port}"`,
    );
  }
  return url.href;
}
