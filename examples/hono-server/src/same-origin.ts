import type { MiddlewareHandler } from 'hono';

/** Where the app is reached: the origins its pages run at, and the `Host` values browsers send. */
export type AppOrigins = {
  /** Origins (`http://127.0.0.1:3000`) whose pages may call the app. */
  origins: ReadonlySet<string>;
  /** `Host` header values (`127.0.0.1:3000`) the app answers. */
  hosts: ReadonlySet<string>;
};

/**
 * The app's origins from configuration only (never from a request): the
 * origin of `publicUrl` (PUBLIC_URL, where browsers reach it, e.g. behind a
 * proxy) and the loopback names at `port` (`127.0.0.1`, `localhost`,
 * `[::1]`). A DNS-rebinding page reaches the app under its own host name,
 * which is none of these.
 *
 * @example
 * ```ts
 * appOrigins({ port: 3000 }).hosts; // Set { '127.0.0.1:3000', 'localhost:3000', '[::1]:3000' }
 * ```
 */
export function appOrigins({
  publicUrl,
  port,
}: {
  /** Where browsers reach the app (`https://chat.example.com`), if configured. */
  publicUrl?: string | undefined;
  /** The port the app listens on, for the loopback names. */
  port?: number | undefined;
}): AppOrigins {
  const urls = [
    ...(publicUrl ? [new URL(publicUrl)] : []),
    ...(port === undefined
      ? []
      : ['127.0.0.1', 'localhost', '[::1]'].map(host => new URL(`http://${host}:${port}`))),
  ];
  if (urls.length === 0) throw new Error('appOrigins needs a publicUrl or a port');
  return {
    origins: new Set(urls.map(url => url.origin)),
    hosts: new Set(urls.map(url => url.host)),
  };
}

/**
 * Refuses requests not meant for this app: a `Host` it does not answer to
 * (421: DNS rebinding, where an attacker's name resolves to 127.0.0.1), and
 * an `Origin` other than its own (403: a page elsewhere sending requests
 * with the user's cookies). Same-origin GETs carry no `Origin`; browsers send
 * one with every cross-origin request and every POST.
 *
 * @example
 * ```ts
 * app.use('*', sameOrigin(appOrigins({ port: 3000 })));
 * ```
 */
export function sameOrigin({ origins, hosts }: AppOrigins): MiddlewareHandler {
  return async (c, next) => {
    // Requests built in process (tests' app.request) have no Host header: use the URL's.
    const host = (c.req.header('host') ?? new URL(c.req.url).host).toLowerCase();
    if (!hosts.has(host)) {
      return c.json(
        {
          error: `This server does not answer for host "${host}"; open it at ${[...origins][0]} (set PUBLIC_URL to the address browsers use).`,
        },
        421,
      );
    }
    const origin = c.req.header('origin');
    if (origin !== undefined && !origins.has(origin)) {
      return c.json({ error: `Requests from ${origin} are not accepted here.` }, 403);
    }
    await next();
  };
}

/**
 * Refuses a body that is not declared JSON with 415. A page elsewhere can
 * send `text/plain` without asking first (a CORS "simple" request); JSON
 * needs the browser's preflight, which this app never grants.
 *
 * @example
 * ```ts
 * app.post('/api/chat', requireJson(), async c => c.json(await c.req.json()));
 * ```
 */
export function requireJson(): MiddlewareHandler {
  return async (c, next) => {
    const type = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json') {
      return c.json(
        { error: `Send the body as JSON (Content-Type: application/json), not ${type ?? 'none'}.` },
        415,
      );
    }
    await next();
  };
}
