/**
 * Parses Docker's multiplexed attach/exec stream (no TTY): frames of an 8-byte header
 * (stream type, 3 zero bytes, big-endian length) and a payload. Payload bytes are passed on
 * as they arrive, never buffered as whole frames, so memory stays bounded whatever the
 * frame sizes.
 *
 * @example
 * ```ts
 * const demuxer = new FrameDemuxer({ onPayload: (stream, bytes) => chunks[stream].push(bytes) });
 * socket.on('data', (data) => demuxer.push(data));
 * ```
 */
export class FrameDemuxer {
  private readonly header = Buffer.alloc(8);
  private headerBytes = 0;
  private stream: 'stdout' | 'stderr' = 'stdout';
  private remaining = 0;
  private stopped = false;
  private readonly onPayload: (stream: 'stdout' | 'stderr', payload: Buffer) => void;

  constructor({
    onPayload,
  }: {
    /** Receives each piece of payload with its stream. */
    onPayload: (stream: 'stdout' | 'stderr', payload: Buffer) => void;
  }) {
    this.onPayload = onPayload;
  }

  /** Feeds raw bytes from the socket. */
  push(data: Buffer): void {
    let offset = 0;
    while (offset < data.length && !this.stopped) {
      if (this.remaining === 0) {
        const copied = data.copy(
          this.header,
          this.headerBytes,
          offset,
          offset + 8 - this.headerBytes,
        );
        this.headerBytes += copied;
        offset += copied;
        if (this.headerBytes < 8) return;
        // Type 1 is stdout, 2 stderr; 0 (stdin) never occurs without a TTY.
        this.stream = this.header[0] === 2 ? 'stderr' : 'stdout';
        this.remaining = this.header.readUInt32BE(4);
        this.headerBytes = 0;
        continue;
      }
      const take = Math.min(this.remaining, data.length - offset);
      this.remaining -= take;
      this.onPayload(this.stream, data.subarray(offset, offset + take));
      offset += take;
    }
  }

  /** Ignores everything pushed from now on. */
  stop(): void {
    this.stopped = true;
  }
}
