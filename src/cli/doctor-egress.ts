import type { DoctorCheck } from './doctor-check.ts';

/** The runtime that containers allowed the network (through the egress proxy) run under. */
export const EGRESS_RUNTIME = 'runsc-egress';

/** A runtime as the engine's `docker info` lists it. */
export type EngineRuntime = { path?: string; runtimeArgs?: string[] };

/**
 * Judges the engine's `runsc-egress` runtime: gVisor with `--network=none` (a network never
 * comes from the runtime: the proxy's socket is the only way out) and `--host-uds=open` (the
 * proxy's bind-mounted socket is reachable). Missing or incomplete is a failure only when
 * egress was asked about; a gVisor-less or networked `runsc-egress` always is, since anything
 * asking for it by name would get a container with a network or without gVisor.
 *
 * @example
 * ```ts
 * egressRuntimeCheck({ runtimes: info.Runtimes ?? {}, egress: true, fix: 'sudo npx ai-toolbelt setup-sandbox' });
 * ```
 */
export function egressRuntimeCheck({
  runtimes,
  egress,
  fix,
}: {
  /** The engine's runtimes (`docker info` -> `Runtimes`). */
  runtimes: Record<string, EngineRuntime>;
  /** Whether the doctor was asked about egress. */
  egress: boolean;
  /** What sets the runtime up. */
  fix: string;
}): DoctorCheck {
  const name = 'egress runtime';
  const runtime = runtimes[EGRESS_RUNTIME];
  const args = runtime?.runtimeArgs ?? [];
  const shown = `${EGRESS_RUNTIME} (${runtime?.path ?? '?'} ${args.join(' ')})`.replace(' )', ')');
  if (runtime !== undefined && !/runsc/.test(runtime.path ?? '')) {
    return { name, ok: false, detail: `${shown} is not gVisor`, fix };
  }
  if (runtime !== undefined && !args.includes('--network=none')) {
    return {
      name,
      ok: false,
      detail: `${shown} lacks --network=none: its containers would get a network`,
      fix,
    };
  }
  if (runtime !== undefined && args.includes('--host-uds=open')) {
    return { name, ok: true, detail: shown };
  }
  const found =
    runtime === undefined ? `${EGRESS_RUNTIME} is not set up` : `${shown} lacks --host-uds=open`;
  return egress
    ? { name, ok: false, detail: `${found}: the egress proxy's socket is unreachable`, fix }
    : { name, ok: true, detail: `${found} (only needed for \`egress\`)` };
}

/**
 * Judges pip in the image from what the trial run printed (`pip`'s version, or nothing):
 * containers allowed the network install packages with it.
 */
export function pipCheck({
  version,
  egress,
  fix,
}: {
  /** pip's version in the image, undefined when it is missing. */
  version: string | undefined;
  /** Whether the doctor was asked about egress. */
  egress: boolean;
  /** What rebuilds the image. */
  fix: string;
}): DoctorCheck {
  const name = 'pip in the image';
  if (version !== undefined) return { name, ok: true, detail: `pip ${version}` };
  return egress
    ? { name, ok: false, detail: 'no pip: `pip install` through the egress proxy fails', fix }
    : { name, ok: true, detail: 'no pip (only needed for `egress`)' };
}

/**
 * Python for the trial run: its version on the first line, pip's (or nothing) on the second.
 * The distribution's metadata is read, not pip imported: cheap under gVisor.
 */
export const TRIAL_CODE = [
  'import sys, importlib.metadata as m',
  'print(sys.version.split()[0])',
  'try: print(m.version("pip"))',
  'except m.PackageNotFoundError: print()',
].join('\n');
