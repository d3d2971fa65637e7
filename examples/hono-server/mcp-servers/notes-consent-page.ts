// The notes server's sign-in page: a name (any name: it is a demo) and the
// scopes asked for, posted back to /authorize.

const escape = (value: string) => value.replace(/[&<>"']/g, char => `&#${char.charCodeAt(0)};`);

/**
 * The HTML of the consent page for an authorization request.
 *
 * @example
 * ```ts
 * return c.html(consentPage(new URL(c.req.url).searchParams));
 * ```
 */
export function consentPage(params: URLSearchParams): string {
  const hidden = [...params]
    .filter(([name]) => name !== 'login')
    .map(([name, value]) => `<input type="hidden" name="${escape(name)}" value="${escape(value)}">`)
    .join('');
  const scopes = (params.get('scope') ?? 'notes:read notes:write').split(' ').map(escape);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Sign in to Notes</title>
<style>body{font:16px system-ui;max-width:28rem;margin:4rem auto;padding:0 1rem}
input[type=text]{width:100%;padding:.5rem;font:inherit}button{padding:.5rem 1rem;font:inherit;margin-top:1rem}</style>
</head><body>
<h1>Sign in to Notes</h1>
<p>An app wants to use your notes with: ${scopes.map(s => `<code>${s}</code>`).join(', ')}.</p>
<form method="post" action="/authorize">${hidden}
<label>Your name<br><input id="login" type="text" name="login" value="demo-user" required></label>
<button id="approve" type="submit">Allow</button>
</form>
<form method="post" action="/authorize">${hidden}<button id="deny" type="submit">Deny</button></form>
</body></html>`;
}
