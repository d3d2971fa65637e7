import type Docker from 'dockerode';
import { SandboxRuntimeMissingError } from '../../errors/sandbox-runtime-missing-error.ts';
import { SandboxUnavailableError } from '../../errors/sandbox-unavailable-error.ts';
import { dockerCall } from '../docker/docker-call.ts';
import { toEngineError } from '../docker/engine-errors.ts';

/** Image label listing the Python distributions inside (`name==version`, comma separated). */
const PACKAGES_LABEL = 'ai-toolbelt.packages';

const SETUP_HINT =
  'On Debian/Ubuntu run `sudo npx ai-toolbelt setup-sandbox` (installs Docker, ' +
  'gVisor and the image); on macOS start Docker Desktop (see docs/sandbox.md).';

/**
 * Checks that the Docker engine answers, has the requested runtime (gVisor's `runsc` unless
 * the runc opt-in is set) and has the image. Returns the runtime to use.
 *
 * @example
 * ```ts
 * const { runtime } = await checkEngine({ docker, engine: 'unix:///var/run/docker.sock', image, runtime: 'runsc', unsafeAllowRuncRuntime: false, dockerTimeoutMs: 10_000 });
 * ```
 */
export async function checkEngine({
  docker,
  engine,
  image,
  runtime,
  unsafeAllowRuncRuntime,
  dockerTimeoutMs,
  egressRuntime,
}: {
  /** Docker client. */
  docker: Docker;
  /** The engine's name, for errors. */
  engine: string;
  /** Image that must exist locally. */
  image: string;
  /** Runtime asked for. */
  runtime: string;
  /** Allow a runtime that is not gVisor. */
  unsafeAllowRuncRuntime: boolean;
  /** Deadline of each Docker call. */
  dockerTimeoutMs: number;
  /** The runtime of containers with egress, when the sandbox has an egress policy. */
  egressRuntime?: string | undefined;
}): Promise<{ runtime: string; gvisor: boolean; packages?: string[]; egressRuntime?: string }> {
  let info: { Runtimes?: Record<string, { path?: string; runtimeArgs?: string[] }> };
  try {
    info = await dockerCall({
      operation: 'info',
      timeoutMs: dockerTimeoutMs,
      // dockerode honours abortSignal here; its types do not declare it.
      call: abortSignal =>
        (docker.info as (options: object) => Promise<typeof info>).call(docker, { abortSignal }),
    });
  } catch (error) {
    const typed = toEngineError(error, { engine });
    if (!SandboxUnavailableError.isInstance(typed) || typed.reason !== 'docker-unreachable') {
      throw typed;
    }
    throw new SandboxUnavailableError({
      reason: 'docker-unreachable',
      engine,
      message: `${typed.message} ${SETUP_HINT}`,
      cause: error,
    });
  }
  const runtimes = info.Runtimes ?? {};
  const isGvisor = (name: string) => /runsc/.test(runtimes[name]?.path ?? name);
  let chosen = runtime;
  if (runtimes[chosen] === undefined) {
    if (!unsafeAllowRuncRuntime) {
      throw new SandboxRuntimeMissingError({ runtime, available: Object.keys(runtimes), engine });
    }
    chosen = 'runc';
  }
  const gvisor = isGvisor(chosen);
  if (!gvisor && !unsafeAllowRuncRuntime) {
    throw new SandboxRuntimeMissingError({
      runtime: 'runsc',
      available: Object.keys(runtimes),
      engine,
    });
  }
  if (!gvisor) {
    process.emitWarning(
      `ai-toolbelt sandbox is running untrusted code under \`${chosen}\`, WITHOUT gVisor: a kernel ` +
        'exploit in the code escapes the container. unsafeAllowRuncRuntime is for development only.',
      { type: 'ai-toolbelt.UnsafeRuntime' },
    );
  }
  const egress =
    egressRuntime === undefined
      ? {}
      : {
          egressRuntime: gvisor ? checkEgressRuntime({ runtimes, egressRuntime, engine }) : chosen,
        };
  let imageInfo: { Config?: { Labels?: Record<string, string> | null } };
  try {
    imageInfo = await dockerCall({
      operation: 'image inspect',
      timeoutMs: dockerTimeoutMs,
      // Image inspect takes no abort signal (its options become query parameters): the race bounds it.
      call: () => docker.getImage(image).inspect(),
    });
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode !== 404)
      throw toEngineError(error, { engine });
    throw new SandboxUnavailableError({
      reason: 'image-missing',
      engine,
      message:
        `The sandbox image \`${image}\` is not on the Docker engine ${engine}. ${SETUP_HINT} ` +
        "Or pass `image` naming an image with python3 and coreutils' `timeout`.",
      cause: error,
    });
  }
  const listed = imageInfo.Config?.Labels?.[PACKAGES_LABEL];
  const packages = listed ? listed.split(',').filter(entry => entry.length > 0) : undefined;
  return { runtime: chosen, gvisor, ...(packages ? { packages } : {}), ...egress };
}

/**
 * The egress runtime must be gVisor without a network (`--network=none`): the proxy's socket
 * is the container's only way out. Anything else is refused, never replaced.
 */
function checkEgressRuntime({
  runtimes,
  egressRuntime,
  engine,
}: {
  runtimes: Record<string, { path?: string; runtimeArgs?: string[] }>;
  egressRuntime: string;
  engine: string;
}): string {
  const found = runtimes[egressRuntime];
  const args = found?.runtimeArgs ?? [];
  if (found !== undefined && /runsc/.test(found.path ?? '') && args.includes('--network=none')) {
    return egressRuntime;
  }
  throw new SandboxRuntimeMissingError({
    runtime: egressRuntime,
    available: Object.keys(runtimes),
    engine,
    hint:
      (found === undefined
        ? ''
        : `It is registered as ${JSON.stringify(found)}, which is not gVisor with --network=none. `) +
      '`egress` needs gVisor registered a second time with `--network=none --host-uds=open` (the ' +
      "container's only way out is its proxy's socket): run `sudo npx ai-toolbelt setup-sandbox`, or add " +
      `{"runtimes":{"${egressRuntime}":{"path":"/usr/bin/runsc","runtimeArgs":["--network=none","--host-uds=open"]}}} ` +
      'to /etc/docker/daemon.json and send dockerd SIGHUP.',
  });
}
