import { sha256 } from '@noble/hashes/sha2.js';
import { encodeBase64Url } from './base64.ts';

const utf8 = new TextEncoder();

/**
 * SHA-256 of the UTF-8 text, as unpadded base64url: the same string
 * `createHash('sha256').update(text).digest('base64url')` gives, so keys made
 * before (stored vectors, conversation markers) stay valid.
 *
 * Synchronous and free of `node:crypto`, so it runs on edge runtimes: keys are
 * computed in synchronous code (the exported `embeddingCacheKey`, the catalog
 * diff). Web Crypto's `digest` is async only, and in Node a batch of 3,000
 * digests through it took 5-10x as long as this (measured in the cold-start
 * work), which a warm start would pay for every tool.
 *
 * @example
 * ```ts
 * const key = sha256Base64Url(JSON.stringify(tool));
 * ```
 */
export function sha256Base64Url(text: string): string {
  return encodeBase64Url(sha256(utf8.encode(text)));
}
