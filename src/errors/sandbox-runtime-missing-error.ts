import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltSandboxRuntimeMissingError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * The Docker engine has no gVisor (`runsc`) runtime registered, or the Kubernetes cluster
 * has no gVisor RuntimeClass (`kind: 'kubernetes'`). The sandbox never falls back to `runc`
 * on its own; the message says how to install gVisor.
 *
 * @example
 * ```ts
 * if (SandboxRuntimeMissingError.isInstance(error)) console.error(error.available);
 * ```
 */
export class SandboxRuntimeMissingError extends ToolbeltError {
  private readonly [symbol] = true;
  /** The runtime that was asked for, e.g. `runsc` (a RuntimeClass on Kubernetes). */
  readonly runtime: string;
  /** The runtimes the Docker engine does have (RuntimeClasses, when they could be listed). */
  readonly available: string[];
  /** The engine's name, when known. */
  readonly engine: string | undefined;

  constructor({
    runtime,
    available,
    engine,
    hint,
    kind = 'docker',
  }: {
    runtime: string;
    available: string[];
    engine?: string;
    /** What to do instead of the default advice (installing gVisor). */
    hint?: string;
    /** A Docker engine's runtime, or a Kubernetes cluster's RuntimeClass. */
    kind?: 'docker' | 'kubernetes';
  }) {
    const where =
      kind === 'docker'
        ? `The Docker engine${engine === undefined ? '' : ` ${engine}`} has no \`${runtime}\` runtime`
        : `The Kubernetes cluster${engine === undefined ? '' : ` ${engine}`} has no gVisor RuntimeClass \`${runtime}\``;
    super({
      name,
      message:
        `${where} (it has: ${available.join(', ') || 'none'}). ` +
        (hint ??
          'Install gVisor and register it: on Debian/Ubuntu as root run `npx ai-toolbelt setup-sandbox` ' +
            '(or `apt-get install runsc`, then add ' +
            '{"runtimes":{"runsc":{"path":"/usr/bin/runsc","runtimeArgs":["--network=none"]}}} ' +
            'to /etc/docker/daemon.json and restart dockerd); see https://gvisor.dev/docs/user_guide/install/. ' +
            'Without gVisor (e.g. Docker Desktop on macOS) you can opt in to the weaker runc runtime ' +
            'with `unsafeAllowRuncRuntime: true`.'),
    });
    this.runtime = runtime;
    this.available = available;
    this.engine = engine;
  }

  static override isInstance(error: unknown): error is SandboxRuntimeMissingError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
