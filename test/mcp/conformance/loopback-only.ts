// Preloaded (node --import) into the conformance runner and every driver it
// starts: a TCP connection to anything but this machine throws, so the run
// proves it needs no network (the suite and its servers come from npm, once,
// at install time).
import net from 'node:net';

const local = new Set(['localhost', '127.0.0.1', '::1', '::ffff:127.0.0.1']);
const connect = net.Socket.prototype.connect;

net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
  const first = args[0];
  const options = (Array.isArray(first) ? first[0] : first) as
    { host?: string; path?: string } | number | string;
  const host =
    typeof options === 'object' && options !== null
      ? options.path === undefined
        ? (options.host ?? 'localhost')
        : undefined
      : typeof options === 'number'
        ? typeof args[1] === 'string'
          ? args[1]
          : 'localhost'
        : undefined; // a string is a Unix socket path
  if (host !== undefined && !local.has(host)) {
    throw new Error(`conformance run went off this machine: connect to ${host} (offline run)`);
  }
  return connect.apply(this, args as never);
} as typeof connect;
