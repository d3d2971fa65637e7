import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import { SandboxInsecureEngineError } from '../../errors/sandbox-insecure-engine-error.ts';
import {
  type KubernetesEngineOptions,
  type ResolvedKubernetesOptions,
  resolveKubernetesEngine,
} from './kubernetes-options.ts';

/**
 * One Docker engine for the sandbox:
 * - a dockerode client;
 * - a DOCKER_HOST-style address: `unix:///var/run/docker.sock`, `tcp://10.0.0.5:2376`,
 *   `ssh://user@host` (TLS for `tcp://` follows DOCKER_TLS_VERIFY / DOCKER_CERT_PATH, as
 *   with `docker -H`; plain `tcp://` without TLS is refused unless `allowInsecureTcp`);
 * - options: dockerode's (`socketPath`, or `host`/`port`/`protocol` with `ca`/`cert`/`key`,
 *   or `protocol: 'ssh'`), or `url` with `certPath` (a directory with ca.pem, cert.pem and
 *   key.pem: mutual TLS, verified), or an existing `docker` client; each with an optional
 *   `name` used in errors (by default derived from the address, never with credentials);
 * - `{ kubernetes: {...} }`: a Kubernetes cluster whose pods run under gVisor (see
 *   `KubernetesEngineOptions`); it must then be the sandbox's only engine.
 *
 * @example
 * ```ts
 * const engines: SandboxEngine[] = [
 *   { url: 'tcp://10.0.0.5:2376', certPath: '/etc/ai-toolbelt/client', name: 'sandbox-a' },
 *   'unix:///var/run/docker.sock',
 * ];
 * ```
 */
export type SandboxEngine =
  Docker | string | SandboxEngineOptions | { kubernetes: KubernetesEngineOptions };

/**
 * The object form of `SandboxEngine`.
 *
 * @example
 * ```ts
 * const engine: SandboxEngineOptions = { url: 'tcp://10.0.0.5:2376', certPath: '/run/secrets/sandbox' };
 * ```
 */
export type SandboxEngineOptions = Docker.DockerOptions & {
  /** Name used in errors and status; default: the address (`tcp+tls://10.0.0.5:2376`). */
  name?: string;
  /** A DOCKER_HOST-style address, instead of socketPath/host/port/protocol. */
  url?: string;
  /** Directory with ca.pem, cert.pem and key.pem: mutual TLS with the engine verified. */
  certPath?: string;
  /** An existing dockerode client (the other connection options are then ignored). */
  docker?: Docker;
};

/** An engine's name and how to reach it: a Docker client, or a Kubernetes cluster's options. */
export type EngineAddress =
  | { name: string; docker: Docker; kubernetes?: undefined }
  | { name: string; kubernetes: ResolvedKubernetesOptions; docker?: undefined };

// docker-modem fills whatever options are not given from DOCKER_HOST & co: explicit options
// must override every connection field, or an env var would redirect an explicit engine.
const CLEAR: Docker.DockerOptions = {
  socketPath: undefined,
  host: undefined,
  port: undefined,
  protocol: undefined,
  ca: undefined,
  cert: undefined,
  key: undefined,
  username: undefined,
};

function defaultSocket(): string {
  const desktop = join(homedir(), '.docker', 'run', 'docker.sock');
  return existsSync(desktop) ? desktop : '/var/run/docker.sock';
}

function readCerts(
  certPath: string,
  argument: string,
): Pick<Docker.DockerOptions, 'ca' | 'cert' | 'key'> {
  const read = (file: string) => {
    const path = join(certPath, file);
    try {
      return readFileSync(path);
    } catch (error) {
      throw new InvalidArgumentError({
        argument,
        value: certPath,
        message: `cannot read ${path} (${(error as Error).message}); the directory needs ca.pem, cert.pem and key.pem`,
      });
    }
  };
  return { ca: read('ca.pem'), cert: read('cert.pem'), key: read('key.pem') };
}

/**
 * dockerode options for a DOCKER_HOST-style address, with TLS as the Docker CLI decides it:
 * `certPath` (or DOCKER_TLS_VERIFY set to anything non-empty, with DOCKER_CERT_PATH or
 * ~/.docker) means mutual TLS with the engine verified.
 */
export function parseDockerHost({
  url,
  certPath,
  env = process.env,
  argument = 'url',
}: {
  /** `unix:///path`, `tcp://host[:port]`, `host:port` or `ssh://[user@]host[:port]`. */
  url: string;
  /** Certificate directory; overrides the environment. */
  certPath?: string;
  /** Where DOCKER_TLS_VERIFY, DOCKER_CERT_PATH, DOCKER_TLS and SSH_AUTH_SOCK are read. */
  env?: NodeJS.ProcessEnv;
  /** Names the option in errors. */
  argument?: string;
}): Docker.DockerOptions {
  const invalid = (message: string) => new InvalidArgumentError({ argument, value: url, message });
  if (url.startsWith('unix://'))
    return { socketPath: url.slice('unix://'.length) || defaultSocket() };
  if (url.startsWith('npipe://')) return { socketPath: url.slice('npipe://'.length) };
  let parsed: URL;
  try {
    parsed = new URL(url.includes('://') ? url : `tcp://${url}`);
  } catch {
    throw invalid(
      'is not a Docker address like unix:///var/run/docker.sock or tcp://10.0.0.5:2376',
    );
  }
  if (parsed.protocol === 'ssh:') {
    return {
      protocol: 'ssh',
      host: parsed.hostname,
      port: parsed.port || '22',
      username: decodeURIComponent(parsed.username) || undefined,
      sshOptions: { agent: env.SSH_AUTH_SOCK },
    };
  }
  if (parsed.protocol !== 'tcp:') throw invalid('must start with unix://, tcp:// or ssh://');
  const verify = certPath !== undefined || (env.DOCKER_TLS_VERIFY ?? '') !== '';
  if (!verify && (env.DOCKER_TLS ?? '') !== '') {
    throw invalid(
      'DOCKER_TLS without DOCKER_TLS_VERIFY (TLS without verifying the engine) is not supported; set DOCKER_TLS_VERIFY=1',
    );
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!verify) return { protocol: 'http', host, port: parsed.port || '2375' };
  const dir = certPath ?? (env.DOCKER_CERT_PATH || join(homedir(), '.docker'));
  return {
    protocol: 'https',
    host,
    port: parsed.port || '2376',
    ...readCerts(dir, certPath !== undefined ? 'certPath' : 'DOCKER_CERT_PATH'),
  };
}

/** A name for the engine a client talks to, from its address only (no user names or secrets). */
export function engineName(docker: Docker): string {
  const modem = (docker as Docker & { modem?: Record<string, unknown> }).modem ?? {};
  const { host, port, protocol, socketPath } = modem;
  if (typeof host === 'string' && host !== '') {
    const scheme = protocol === 'https' ? 'tcp+tls' : protocol === 'ssh' ? 'ssh' : 'tcp';
    const bracketed = host.includes(':') ? `[${host}]` : host;
    return `${scheme}://${bracketed}${port ? `:${String(port)}` : ''}`;
  }
  return `unix://${typeof socketPath === 'string' ? socketPath : defaultSocket()}`;
}

/** True for a client that talks plain HTTP to a TCP address (no TLS, no SSH). */
function isPlainTcp(docker: Docker): boolean {
  const modem = (docker as Docker & { modem?: Record<string, unknown> }).modem ?? {};
  return typeof modem.host === 'string' && modem.host !== '' && modem.protocol === 'http';
}

function isDockerClient(value: unknown): value is Docker {
  const candidate = value as { modem?: unknown; createContainer?: unknown } | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.createContainer === 'function' &&
    typeof candidate.modem === 'object'
  );
}

/**
 * Resolves one `SandboxEngine` to a client and a name. With nothing given, the engine the
 * Docker CLI would use: DOCKER_HOST (with DOCKER_TLS_VERIFY / DOCKER_CERT_PATH), else the
 * local socket.
 *
 * @example
 * ```ts
 * const { name, docker } = resolveEngineAddress({ engine: 'tcp://10.0.0.5:2376' });
 * ```
 */
export function resolveEngineAddress({
  engine,
  argument = 'engines',
  env = process.env,
  allowInsecureTcp = false,
}: {
  /** The engine; undefined means the environment's (DOCKER_HOST or the local socket). */
  engine?: SandboxEngine;
  /** Names the option in errors, e.g. `engines[1]`. */
  argument?: string;
  /** Environment read for DOCKER_HOST & co. */
  env?: NodeJS.ProcessEnv;
  /** Accept plain `tcp://` (HTTP, no TLS); otherwise `SandboxInsecureEngineError`. */
  allowInsecureTcp?: boolean;
}): EngineAddress {
  const named = (docker: Docker, name?: string, from = argument): EngineAddress => {
    if (name !== undefined && (typeof name !== 'string' || name.trim() === '')) {
      throw new InvalidArgumentError({
        argument: `${argument}.name`,
        value: name,
        message: 'must be a non-empty string',
      });
    }
    // Checked on the client itself, so every way of giving an engine is covered alike.
    if (!allowInsecureTcp && isPlainTcp(docker)) {
      throw new SandboxInsecureEngineError({ engine: engineName(docker), argument: from });
    }
    return { docker, name: name ?? engineName(docker) };
  };
  if (engine === undefined) {
    const url = env.DOCKER_HOST;
    if (url === undefined || url === '')
      return named(new Docker({ ...CLEAR, socketPath: defaultSocket() }));
    return named(
      new Docker({ ...CLEAR, ...parseDockerHost({ url, env, argument: 'DOCKER_HOST' }) }),
      undefined,
      'DOCKER_HOST',
    );
  }
  if (isDockerClient(engine)) return named(engine);
  if (typeof engine === 'object' && engine !== null && 'kubernetes' in engine) {
    return resolveKubernetesEngine({ options: engine.kubernetes, argument });
  }
  if (typeof engine === 'string') {
    return named(new Docker({ ...CLEAR, ...parseDockerHost({ url: engine, env, argument }) }));
  }
  if (typeof engine !== 'object' || engine === null) {
    throw new InvalidArgumentError({
      argument,
      value: engine,
      message: 'must be a dockerode client, a Docker address string or an options object',
    });
  }
  const { name, url, certPath, docker, ...options } = engine as SandboxEngineOptions;
  if (docker !== undefined) {
    if (!isDockerClient(docker)) {
      throw new InvalidArgumentError({
        argument: `${argument}.docker`,
        value: docker,
        message: 'must be a dockerode client',
      });
    }
    return named(docker, name);
  }
  if (url !== undefined) {
    const parsed = parseDockerHost({ url, certPath, env, argument: `${argument}.url` });
    return named(new Docker({ ...CLEAR, ...options, ...parsed }), name);
  }
  const certs = certPath === undefined ? {} : readCerts(certPath, `${argument}.certPath`);
  const protocol = options.protocol ?? (certPath !== undefined ? 'https' : undefined);
  if (options.socketPath === undefined && options.host === undefined) {
    throw new InvalidArgumentError({
      argument,
      value: engine,
      message: 'needs `url`, `socketPath` or `host` (or `docker`)',
    });
  }
  return named(new Docker({ ...CLEAR, ...options, ...certs, protocol }), name);
}
