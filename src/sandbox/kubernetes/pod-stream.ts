import type { Socket } from 'node:net';
import { SandboxUnavailableError } from '../../errors/sandbox-unavailable-error.ts';
import { BoxStream } from '../driver/box-stream.ts';
import type { KubeClients } from './kube-client.ts';
import { CONTAINER } from './pod-spec.ts';

// The channels of Kubernetes' streaming protocol: one byte before each message.
const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const CLOSE = 255;
// v5 is the version that can close stdin alone (Kubernetes 1.30 and later).
const V5 = 'v5.channel.k8s.io';
// Big inputs go in pieces: the API server proxies each message whole.
const PIECE = 1 << 20;

type WebSocket = Awaited<ReturnType<KubeClients['attach']['handler']['connect']>>;

/**
 * Attaches to a pod's sandbox container over the API server's WebSocket (`pods/attach`, the
 * client's own handler: its auth and TLS) and returns it as a `BoxStream`: stdout and stderr on
 * their channels, stdin written on channel 0 and closed on its own with v5's close message, so a
 * one-shot run's stdin ends while its output keeps coming, as with Docker's half-close. A server
 * that cannot close stdin alone (before Kubernetes 1.30) is refused with a typed error.
 *
 * @example
 * ```ts
 * const stream = await attachPod({ clients, namespace: 'sandbox', name: pod, engine: 'kubernetes:sandbox' });
 * ```
 */
export async function attachPod({
  clients,
  namespace,
  name,
  engine,
}: {
  /** The cluster's clients. */
  clients: KubeClients;
  /** The pod's namespace. */
  namespace: string;
  /** The pod. */
  name: string;
  /** The engine's name, for errors. */
  engine: string;
}): Promise<BoxStream> {
  let socket: WebSocket | undefined;
  const send = (data: Buffer, done?: (error?: Error | null) => void) => {
    if (socket === undefined || socket.readyState !== socket.OPEN) {
      done?.(new Error('the attach connection is closed'));
      return;
    }
    socket.send(data, (error?: Error) => done?.(error ?? null));
  };
  const tcp = () => (socket as unknown as { _socket?: Socket } | undefined)?._socket;
  const stream = new BoxStream({
    write: (chunk, done) => {
      for (let at = 0; at < chunk.length; at += PIECE) {
        const last = at + PIECE >= chunk.length;
        const piece = chunk.subarray(at, at + PIECE);
        send(Buffer.concat([Buffer.of(STDIN), piece]), last ? done : undefined);
      }
      if (chunk.length === 0) done?.(null);
    },
    end: chunk => {
      if (chunk !== undefined && chunk.length > 0) stream.write(chunk);
      send(Buffer.of(CLOSE, STDIN));
    },
    destroy: () => socket?.terminate(),
    // ws keeps its socket private; an idle attach must not keep the process alive.
    ref: () => tcp()?.ref(),
    unref: () => tcp()?.unref(),
  });
  const path =
    `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}` +
    `/attach?container=${CONTAINER}&stdin=true&stdout=true&stderr=true&tty=false`;
  socket = await clients.attach.handler.connect(path, null, (channel: number, data: Buffer) => {
    if (channel === STDOUT) stream.output('stdout', data);
    else if (channel === STDERR) stream.output('stderr', data);
    // Channel 3 carries the attach's end status; the socket closes right after.
    return true;
  });
  socket.on('close', () => stream.ended());
  socket.on('error', () => stream.ended());
  if (socket.protocol !== V5) {
    socket.terminate();
    throw new SandboxUnavailableError({
      reason: 'engine-error',
      engine,
      message:
        `The Kubernetes API server of ${engine} speaks ${socket.protocol || 'an old streaming protocol'} for attach, ` +
        `not ${V5}, so stdin cannot be closed while output keeps coming: the sandbox needs Kubernetes 1.30 or later.`,
    });
  }
  return stream;
}
