import type { Duplex } from 'node:stream';
import { BoxStream } from '../driver/box-stream.ts';
import { FrameDemuxer } from './frame-demuxer.ts';

/**
 * A `BoxStream` over Docker's hijacked attach socket: its frames (no TTY) split into stdout and
 * stderr payloads, half-closing the socket closes the container's stdin, and `end`, `close` and
 * `error` all end the stream. The socket always has an error listener: docker-modem leaves the
 * hijacked socket without one, and a reset must not become an uncaught exception.
 *
 * @example
 * ```ts
 * const stream = dockerBoxStream(await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true }));
 * ```
 */
export function dockerBoxStream(socket: Duplex): BoxStream {
  const stream = new BoxStream({
    write: (chunk, done) => void socket.write(chunk, done),
    end: chunk => void socket.end(chunk),
    destroy: () => void socket.destroy(),
    ref: () => (socket as Duplex & { ref?: () => void }).ref?.(),
    unref: () => (socket as Duplex & { unref?: () => void }).unref?.(),
  });
  const demuxer = new FrameDemuxer({
    onPayload: (which, payload) => stream.output(which, payload),
  });
  socket.on('data', (chunk: Buffer) => demuxer.push(chunk));
  const ended = () => stream.ended();
  socket.once('end', ended).once('close', ended).on('error', ended);
  return stream;
}
