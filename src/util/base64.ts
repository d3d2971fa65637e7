// Base64 without Node's `Buffer` as a requirement, so the root entry runs on
// edge runtimes. Each operation takes the fastest native path the runtime has:
// the standard `Uint8Array` base64 methods (Node 25+, current browsers), else
// Node's `Buffer` where it is a global (Node 22/24, Bun), else `atob`/`btoa`.
// The order matters for start-up: a warm index decodes ~25 MB of stored
// vectors, and the `atob` loop takes about twice as long as either native path.

type NativeBase64 = {
  toBase64?: (options?: { alphabet?: 'base64' | 'base64url'; omitPadding?: boolean }) => string;
  setFromBase64?: (base64: string) => { read: number; written: number };
};
type NodeBuffer = {
  from(buffer: ArrayBufferLike, byteOffset?: number, length?: number): NodeBufferView;
};
type NodeBufferView = {
  toString(encoding: 'base64' | 'base64url'): string;
  write(text: string, encoding: 'base64'): number;
};

// Read at call time, not load time: a test (or a polyfill) may add or remove them.
const nodeBuffer = (): NodeBuffer | undefined =>
  (globalThis as { Buffer?: NodeBuffer }).Buffer ?? undefined;
const native = (bytes: Uint8Array): NativeBase64 => bytes as unknown as NativeBase64;

/** Standard base64 (with padding) of `bytes`. */
export function encodeBase64(bytes: Uint8Array): string {
  const toBase64 = native(bytes).toBase64;
  if (toBase64) return toBase64.call(bytes);
  const buffer = nodeBuffer();
  if (buffer)
    return buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  return portableBase64.encode(bytes);
}

/** URL-safe base64 without padding (`-`, `_`), e.g. for store keys. */
export function encodeBase64Url(bytes: Uint8Array): string {
  const toBase64 = native(bytes).toBase64;
  if (toBase64) return toBase64.call(bytes, { alphabet: 'base64url', omitPadding: true });
  const buffer = nodeBuffer();
  if (buffer)
    return buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
  return toUrlAlphabet(portableBase64.encode(bytes));
}

/** How many bytes standard base64 text decodes to, judged by its length and padding. */
export function base64ByteLength(base64: string): number {
  let length = base64.length;
  if (length > 0 && base64.charCodeAt(length - 1) === 61) length--;
  if (length > 0 && base64.charCodeAt(length - 1) === 61) length--;
  return Math.floor((length * 3) / 4);
}

/**
 * Decodes standard base64 straight into `target` (no intermediate copy on the
 * native paths). True when it was valid base64 of exactly `target.length` bytes.
 */
export function decodeBase64Into(base64: string, target: Uint8Array): boolean {
  if (base64ByteLength(base64) !== target.length) return false;
  const setFromBase64 = native(target).setFromBase64;
  if (setFromBase64) {
    try {
      // It stops once `target` is full, before the final padding.
      const { read, written } = setFromBase64.call(target, base64);
      return written === target.length && /^={0,2}$/.test(base64.slice(read));
    } catch {
      return false; // a character outside the alphabet
    }
  }
  const buffer = nodeBuffer();
  if (buffer) {
    // Buffer stops at the first character outside the alphabet: a short write is the error.
    const view = buffer.from(target.buffer, target.byteOffset, target.byteLength);
    return view.write(base64, 'base64') === target.length;
  }
  return portableBase64.decodeInto(base64, target);
}

function toUrlAlphabet(base64: string): string {
  return base64.replace(/[+/=]/g, c => (c === '+' ? '-' : c === '/' ? '_' : ''));
}

// btoa takes a "binary string"; String.fromCharCode.apply over the whole array
// would overflow the call stack, so it goes in chunks (a multiple of 3 bytes,
// so the chunks' base64 concatenates without padding in between).
const CHUNK = 3 * 8_192;

/** The `atob`/`btoa` implementation, used where neither native path exists (exported for tests). */
export const portableBase64 = {
  encode(bytes: Uint8Array): string {
    let out = '';
    for (let i = 0; i < bytes.length; i += CHUNK) {
      const chunk = bytes.subarray(i, i + CHUNK);
      out += btoa(String.fromCharCode.apply(null, chunk as unknown as number[]));
    }
    return out;
  },
  decodeInto(base64: string, target: Uint8Array): boolean {
    let binary: string;
    try {
      binary = atob(base64);
    } catch {
      return false; // a character outside the alphabet
    }
    if (binary.length !== target.length) return false;
    for (let i = 0; i < binary.length; i++) target[i] = binary.charCodeAt(i);
    return true;
  },
};
