import { createHash, randomBytes } from 'node:crypto';
// The standard Uint8Array base64 methods, as specified (Node 24 lacks them; Node 25+ has them).
import 'core-js/actual/typed-array/set-from-base64.js';
import 'core-js/actual/typed-array/to-base64.js';
import { afterAll, describe, expect, it } from 'vitest';
import {
  base64ByteLength,
  decodeBase64Into,
  encodeBase64,
  encodeBase64Url,
  portableBase64,
} from '../../src/util/base64.ts';
import { sha256Base64Url } from '../../src/util/sha256.ts';

// Each runtime takes another path through the same functions: the standard methods
// (browsers, edge runtimes, Node 25+), Node's Buffer (Node 22/24), or atob/btoa.
const standard = ['toBase64', 'setFromBase64'].map(
  name => [name, Object.getOwnPropertyDescriptor(Uint8Array.prototype, name)!] as const,
);
const buffer = globalThis.Buffer;
type Path = 'standard' | 'buffer' | 'portable';

function on<T>(path: Path, run: () => T): T {
  for (const [name, descriptor] of standard)
    if (path === 'standard') Object.defineProperty(Uint8Array.prototype, name, descriptor);
    else delete (Uint8Array.prototype as unknown as Record<string, unknown>)[name];
  if (path === 'portable') delete (globalThis as { Buffer?: unknown }).Buffer;
  try {
    return run();
  } finally {
    globalThis.Buffer = buffer;
  }
}
afterAll(() => on('buffer', () => {}));

// Every length modulo 3 (padding of 0, 1 and 2), a vector's 6,144 bytes, and more than one btoa chunk.
const samples = [
  ...Array.from({ length: 40 }, (_, n) => randomBytes(n)),
  randomBytes(6_144),
  randomBytes(100_001),
];
const decoded = (base64: string, length: number) => {
  const target = new Uint8Array(length);
  return decodeBase64Into(base64, target) ? buffer.from(target) : undefined;
};

describe.each(['standard', 'buffer', 'portable'] as const)('base64 on the %s path', path => {
  it('encodes as Buffer does, base64 and unpadded base64url', () => {
    on(path, () => {
      for (const bytes of samples) {
        expect(encodeBase64(bytes)).toBe(bytes.toString('base64'));
        expect(encodeBase64Url(bytes)).toBe(bytes.toString('base64url'));
      }
      // A view into a larger buffer encodes only its own bytes.
      const whole = randomBytes(64);
      expect(encodeBase64(whole.subarray(5, 20))).toBe(whole.subarray(5, 20).toString('base64'));
    });
  });

  it('decodes into a target of exactly the right length', () => {
    on(path, () => {
      expect('setFromBase64' in Uint8Array.prototype).toBe(path === 'standard');
      expect(typeof globalThis.Buffer).toBe(path === 'portable' ? 'undefined' : 'function');
      for (const bytes of samples) {
        const base64 = bytes.toString('base64');
        expect(base64ByteLength(base64)).toBe(bytes.length);
        expect(decoded(base64, bytes.length)?.equals(bytes)).toBe(true);
      }
    });
  });

  it('rejects text that is not base64 of that length', () => {
    on(path, () => {
      const base64 = randomBytes(256).toString('base64');
      expect(decoded(`${base64.slice(0, 60)}!${base64.slice(61)}`, 256)).toBeUndefined();
      expect(decoded(base64, 255)).toBeUndefined();
      expect(decoded(base64, 257)).toBeUndefined();
      expect(decoded('AAAA', 256)).toBeUndefined();
      expect(decoded(`${base64.slice(0, 100)}=${base64.slice(101)}`, 256)).toBeUndefined();
    });
  });
});

describe('portable base64', () => {
  it('is what the runtime falls back to, and agrees with Buffer', () => {
    const bytes = randomBytes(1_000);
    expect(portableBase64.encode(bytes)).toBe(bytes.toString('base64'));
    const target = new Uint8Array(1_000);
    expect(portableBase64.decodeInto(bytes.toString('base64'), target)).toBe(true);
    expect(buffer.from(target).equals(bytes)).toBe(true);
  });
});

describe('sha256Base64Url', () => {
  it("gives node:crypto's digest, so stored keys and conversation markers stay valid", () => {
    const texts = ['', 'get weather (get_weather): Current weather', 'héllo wörld ✓ 漢字 🙂'];
    texts.push('x'.repeat(100_000));
    for (const path of ['standard', 'buffer', 'portable'] as const)
      on(path, () => {
        for (const text of texts)
          expect(sha256Base64Url(text)).toBe(createHash('sha256').update(text).digest('base64url'));
      });
  });
});
