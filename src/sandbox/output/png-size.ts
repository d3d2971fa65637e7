const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * Width and height from a PNG's IHDR chunk, or undefined when the bytes are not a PNG.
 * The sandbox is untrusted: sizes are read from the image, never taken from its word.
 *
 * @example
 * ```ts
 * pngSize(readFileSync('chart.png')); // { width: 640, height: 480 }
 * ```
 */
export function pngSize(data: Uint8Array): { width: number; height: number } | undefined {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  // Signature, IHDR length (13) and type, then width and height as big-endian u32.
  if (bytes.length < 24 || !bytes.subarray(0, 8).equals(SIGNATURE)) return undefined;
  if (bytes.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  const width = bytes.readUInt32BE(16);
  const height = bytes.readUInt32BE(20);
  return width > 0 && height > 0 ? { width, height } : undefined;
}
