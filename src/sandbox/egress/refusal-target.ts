import type { EgressRefusal } from '../types.ts';

/** The host a refusal records for a request it could not read at all. */
export const UNREADABLE_HOST = '(unreadable request)';
/** The host a refusal records for a request that named no host. */
export const NO_HOST = '(no host)';
/** The host of the refusal that records a run's byte limit (all its connections were cut). */
export const ALL_CONNECTIONS = '(all connections)';

const PLACEHOLDERS = new Set([UNREADABLE_HOST, NO_HOST, ALL_CONNECTIONS]);
// A host as the proxy checks it: a name, or an IP literal without brackets.
const PLAIN_HOST = /^(?:[a-z0-9._-]{1,253}|[0-9a-f:.]{2,45})$/i;
// What a host name or IP literal is made of; anything else ends it.
const HOST_PREFIX = /^(?:\[[0-9a-f:.]{2,45}\]|[a-z0-9._-]{1,253})/i;

/**
 * The host and port a refusal may record for what the code asked for (a CONNECT target or an
 * authority): parsed as an authority when it is one (credentials dropped), and in any case cut
 * at the first character that cannot be in a host name, so a path, query string or credentials
 * sent where the target should be are never kept. The port is 0 when none could be read.
 *
 * @example
 * ```ts
 * refusalTarget('index.test:3141/simple/?token=x'); // { host: 'index.test', port: 3141 }
 * ```
 */
export function refusalTarget(text: string): { host: string; port: number } {
  let host = text;
  let port = '';
  try {
    const url = new URL(`http://${text}`);
    host = url.hostname;
    port = url.port;
  } catch {
    // Not an authority: cut the text itself.
    port = /^:(\d{1,5})(?!\d)/.exec(text.slice(HOST_PREFIX.exec(text)?.[0].length ?? 0))?.[1] ?? '';
  }
  const cut = HOST_PREFIX.exec(host)?.[0];
  if (cut === undefined) return { host: NO_HOST, port: 0 };
  const number = Number(port);
  return {
    host: cut.replace(/^\[|\]$/g, '').toLowerCase(),
    port: Number.isInteger(number) && number <= 65_535 ? number : 0,
  };
}

/** `refusal` as it may be kept: its host reduced to a host (see `refusalTarget`). */
export function recordable(refusal: EgressRefusal): EgressRefusal {
  if (PLACEHOLDERS.has(refusal.host) || PLAIN_HOST.test(refusal.host)) return refusal;
  return { ...refusal, host: refusalTarget(refusal.host).host };
}
