import type { Duplex } from 'node:stream';
import Docker from 'dockerode';

/**
 * A dockerode client of a real engine that records every code payload the sandbox sends to
 * a container's stdin (`<nonce>\n<header JSON>\n<code><files>`, written and then ended on the
 * attach socket). Counting a run's code across engines shows whether it ever ran twice.
 */
export function recordingDocker(options?: Docker.DockerOptions): {
  docker: Docker;
  sent: string[];
} {
  const sent: string[] = [];
  class Recording extends Docker {
    override async createContainer(spec: Docker.ContainerCreateOptions) {
      const container = await super.createContainer(spec);
      const attach = container.attach.bind(container) as (o: object) => Promise<Duplex>;
      container.attach = (async (attachOptions: object) => {
        const socket = await attach(attachOptions);
        const chunks: Buffer[] = [];
        const keep = (chunk: unknown) => {
          if (typeof chunk === 'string' || chunk instanceof Uint8Array)
            chunks.push(Buffer.from(chunk));
        };
        const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
        socket.write = ((...args: unknown[]) => {
          keep(args[0]);
          return write(...args);
        }) as Duplex['write'];
        const end = socket.end.bind(socket) as (...args: unknown[]) => Duplex;
        socket.end = ((...args: unknown[]) => {
          keep(args[0]);
          // Streams also end sockets themselves (a discarded warm container): no run input then.
          const input = Buffer.concat(chunks.splice(0));
          // `<proof>\n<nonce>\n<header JSON>\n<code><files>` (see encodeRunInput).
          const nonceStart = input.indexOf(10) + 1;
          const headerStart = nonceStart > 0 ? input.indexOf(10, nonceStart) + 1 : 0;
          const codeStart = headerStart > 0 ? input.indexOf(10, headerStart) + 1 : 0;
          if (codeStart > headerStart) {
            const { code } = JSON.parse(input.subarray(headerStart, codeStart).toString()) as {
              code: number;
            };
            sent.push(input.subarray(codeStart, codeStart + code).toString());
          }
          return end(...args);
        }) as Duplex['end'];
        return socket;
      }) as unknown as Docker.Container['attach'];
      return container;
    }
  }
  return { docker: new Recording(options), sent };
}
