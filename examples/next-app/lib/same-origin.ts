/** Where the app is reached: the origins its pages run at, and the `Host` values browsers send. */
export type AppOrigins = {
  /** Origins (`http://127.0.0.1:3000`) whose pages may call the app. */
  origins: ReadonlySet<string>;
  /** `Host` header values (`127.0.0.1:3000`) the app answers. */
  hosts: ReadonlySet<string>;
};

/**
 * The app's origins from configuration only, never from a request:
 * `PUBLIC_URL` (where browsers reach it, e.g. behind a proxy) and the loopback
 * names at the port `next start` / `next dev` listens on (`PORT`, which Next
 * sets once listening; 3000 before). A DNS-rebinding page reaches the app
 * under its own host name, which is none of these. Plain Web APIs: the Edge
 * route uses it too.
 *
 * @example
 * ```ts
 * appOrigins({ PORT: '3000' }).hosts; // Set { '127.0.0.1:3000', 'localhost:3000', '[::1]:3000' }
 * ```
 */
export function appOrigins(env: Record<string, string | undefined> = process.env): AppOrigins {
  const port = env.PORT || '3000';
  const urls = [
    ...(env.PUBLIC_URL ? [new URL(env.PUBLIC_URL)] : []),
    ...['127.0.0.1', 'localhost', '[::1]'].map(host => new URL(`http://${host}:${port}`)),
  ];
  return {
    origins: new Set(urls.map(url => url.origin)),
    hosts: new Set(urls.map(url => url.host)),
  };
}

/**
 * Where browsers reach the app, for links the app hands out (the OAuth
 * callback): `PUBLIC_URL`, else `http://127.0.0.1:PORT`. Configuration only,
 * never a request's `Host` or `X-Forwarded-Host`.
 *
 * @example
 * ```ts
 * new URL('/api/mcp/callback', appUrl());
 * ```
 */
export function appUrl(env: Record<string, string | undefined> = process.env): string {
  return env.PUBLIC_URL || `http://127.0.0.1:${env.PORT || '3000'}`;
}

/**
 * The response refusing a request not meant for this app, or undefined to go
 * on: a `Host` it does not answer to (421: DNS rebinding, an attacker's name
 * resolving to 127.0.0.1), an `Origin` other than its own (403: a page
 * elsewhere sending requests with the user's cookies), and with `json`, a
 * body not declared `application/json` (415: a page elsewhere can send
 * `text/plain` without the browser's preflight). Route handlers call it first.
 *
 * @example
 * ```ts
 * const refused = refuseCrossSite(request, { json: true });
 * if (refused) return refused;
 * ```
 */
export function refuseCrossSite(
  request: Request,
  {
    json = false,
    allowed = appOrigins(),
  }: {
    /** The request must carry a JSON body. */
    json?: boolean;
    /** Where the app is reached. */
    allowed?: AppOrigins;
  } = {},
): Response | undefined {
  const host = (request.headers.get('host') ?? new URL(request.url).host).toLowerCase();
  if (!allowed.hosts.has(host)) {
    return Response.json(
      {
        error: `This server does not answer for host "${host}"; open it at ${appUrl()} (set PUBLIC_URL to the address browsers use).`,
      },
      { status: 421 },
    );
  }
  const origin = request.headers.get('origin');
  if (origin !== null && !allowed.origins.has(origin))
    return Response.json(
      { error: `Requests from ${origin} are not accepted here.` },
      { status: 403 },
    );
  const type = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (json && type !== 'application/json') {
    return Response.json(
      { error: `Send the body as JSON (Content-Type: application/json), not ${type ?? 'none'}.` },
      { status: 415 },
    );
  }
  return undefined;
}
