// A Python package index of the test's own: pure-Python wheels it builds, served over HTTP on
// loopback as a PEP 503 "simple" index. Tests never reach PyPI or any other outside host.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * Builds a pure-Python wheel `<module>-<version>-py3-none-any.whl` in `dir` whose module
 * `<module>` holds `VALUE = value`; the distribution's name is the module's with `-` for `_`.
 */
export function buildWheel(
  dir: string,
  { module, version, value }: { module: string; version: string; value: number },
): string {
  const name = `${module}-${version}-py3-none-any.whl`;
  execFileSync('python3', [
    '-c',
    `
import base64, hashlib, sys, zipfile
path, module, version, value = sys.argv[1:5]
info = f"{module}-{version}.dist-info"
files = {
    f"{module}/__init__.py": f"VALUE = {value}\\n",
    f"{info}/METADATA": f"Metadata-Version: 2.1\\nName: {module.replace('_', '-')}\\nVersion: {version}\\n",
    f"{info}/WHEEL": "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
}
record = []
with zipfile.ZipFile(path, "w") as wheel:
    for name, text in files.items():
        wheel.writestr(name, text)
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text)}")
    wheel.writestr(f"{info}/RECORD", "\\n".join(record + [f"{info}/RECORD,,"]) + "\\n")
`,
    join(dir, name),
    module,
    version,
    String(value),
  ]);
  return name;
}

/** The sha256 of a file in `dir`, hex. */
export function sha256Of(dir: string, file: string): string {
  return createHash('sha256')
    .update(readFileSync(join(dir, file)))
    .digest('hex');
}

/**
 * Serves `pages` (path -> HTML) and the wheels in `dir` under `/files/` on 127.0.0.1; other
 * routes go to `fallback` (a redirect, say) or answer 404. Resolves with the server and port.
 */
export async function servePackageIndex({
  dir,
  pages,
  files,
  fallback,
}: {
  dir: string;
  pages: Record<string, string>;
  files: readonly string[];
  fallback?: (request: IncomingMessage, response: ServerResponse) => boolean;
}): Promise<{ server: Server; port: number; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(String(request.url));
    const page = pages[request.url ?? ''];
    if (page !== undefined) {
      response.setHeader('content-type', 'text/html');
      return void response.end(page);
    }
    const file = request.url?.startsWith('/files/') ? request.url.slice(7) : '';
    if (files.includes(file)) return void response.end(readFileSync(join(dir, file)));
    if (fallback?.(request, response)) return;
    response.statusCode = 404;
    response.end();
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, requests };
}
