import { randomBytes } from 'node:crypto';
import { pythonSource } from './python-source.ts';

/**
 * The supervisor's exit status when it cannot make itself non-dumpable (or has no ctypes):
 * it refuses to start the bootstrap, and the host reports the run as `crashed`. The code never
 * ran, so it cannot be the code's own status (which only ever arrives in the done marker).
 * `run_supervisor.py` and `interpreter_supervisor.py` exit with it.
 */
export const SUPERVISOR_UNSAFE_EXIT = 71;

/** What the bootstrap writes to stderr once its pre-imports are done and it waits for code. */
export const READY_MARKER = Buffer.from('\0ai-toolbelt:ready\n', 'latin1');

/**
 * The container's command: `timeout -s KILL` bounds its life even if the host dies; the
 * supervisor (`python/run_supervisor.py`) starts the bootstrap (`python/run_bootstrap.py`),
 * which imports `preimport` while it waits for code, and reports its real exit status.
 */
export function bootstrapCommand({
  ttlMs,
  preimport = [],
}: {
  /** Lifetime bound of the container. */
  ttlMs: number;
  /** Modules to import before the code arrives. */
  preimport?: readonly string[];
}): string[] {
  const ttlSeconds = Math.max(1, Math.ceil(ttlMs / 1000));
  return [
    'timeout',
    '-s',
    'KILL',
    `${ttlSeconds}s`,
    'python3',
    '-I',
    '-S',
    '-c',
    pythonSource('run_supervisor'),
    pythonSource('run_bootstrap'),
    preimport.join(','),
  ];
}

/** A fresh 32-hex-digit token: a run's record nonce, or its proof token (see `python/run_supervisor.py`). */
export function createNonce(): string {
  return randomBytes(16).toString('hex');
}

/**
 * `\0ai-toolbelt:<token>:`: with the run's nonce, the prefix of the records the bootstrap
 * writes after the code (artifacts, notes); with its proof token, of the supervisor's done
 * marker.
 */
export function markerPrefix(nonce: string): Buffer {
  return Buffer.from(`\0ai-toolbelt:${nonce}:`, 'latin1');
}

/** Caps the bootstrap applies to what it returns (the host checks them again). */
export type ArtifactCaps = {
  /** Figures returned as PNG. */
  images: number;
  /** Files returned from /tmp/outputs. */
  files: number;
  /** Bytes of all returned images and files together. */
  bytes: number;
};

/**
 * What the host writes to the container's stdin: `<proof>\n` (read by the supervisor only),
 * then `<nonce>\n<header JSON>\n<code><files>` for the bootstrap. Input files are already
 * validated (see `resolveInputFiles`).
 */
export function encodeRunInput({
  proof,
  nonce,
  code,
  files,
  caps,
}: {
  /** The run's proof token (32 hex digits): the supervisor's, never the code's. */
  proof: string;
  /** The run's record nonce. */
  nonce: string;
  /** Python source. */
  code: string;
  /** Absolute paths under /tmp and their bytes. */
  files: ReadonlyArray<{ path: string; data: Uint8Array }>;
  /** Artifact caps. */
  caps: ArtifactCaps;
}): Buffer[] {
  const source = Buffer.from(code, 'utf8');
  const header = {
    code: source.length,
    files: files.map(file => ({ path: file.path, bytes: file.data.byteLength })),
    caps,
  };
  return [
    Buffer.from(`${proof}\n${nonce}\n${JSON.stringify(header)}\n`, 'utf8'),
    source,
    ...files.map(file => Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength)),
  ];
}
