import type { Duplex } from 'node:stream';
import Docker from 'dockerode';

/**
 * A dockerode client of a real engine that records every code payload the sandbox sends to
 * a container's stdin (the sandbox writes the code with one `end(code)` on the attach socket).
 * Counting a run's code across engines shows whether it ever ran twice.
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
        const end = socket.end.bind(socket) as (...args: unknown[]) => Duplex;
        socket.end = ((...args: unknown[]) => {
          if (typeof args[0] === 'string') sent.push(args[0]);
          return end(...args);
        }) as Duplex['end'];
        return socket;
      }) as unknown as Docker.Container['attach'];
      return container;
    }
  }
  return { docker: new Recording(options), sent };
}
