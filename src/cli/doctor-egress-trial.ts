import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DoctorCheck } from './doctor-check.ts';

// Names only this check's resolver knows: both lead to its own server on loopback, so the
// trial never aims at anything outside this machine.
const ALLOWED = 'allowed.doctor.invalid';
const REFUSED = 'refused.doctor.invalid';

/**
 * A real run with an egress policy: the code fetches a page from a server this check starts on
 * loopback (allowed by a rule with `privateAddresses`) and one more by a name that resolves to
 * loopback without that permission (which the proxy must refuse). Ok when the first arrives
 * and the second is refused as `private-address`.
 *
 * @example
 * ```ts
 * checks.push(await egressTrial({ image, timeoutMs: 60_000, fix: 'sudo npx ai-toolbelt setup-sandbox' }));
 * ```
 */
export async function egressTrial({
  image,
  timeoutMs,
  fix,
}: {
  /** The sandbox image. */
  image: string;
  /** Longest wait for the run. */
  timeoutMs: number;
  /** What sets the pieces up. */
  fix: string;
}): Promise<DoctorCheck> {
  const name = 'egress proxy';
  const token = randomBytes(8).toString('hex');
  const server = createServer((_request, response) => response.end(token));
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const { DockerSandbox } = await import('../sandbox/index.ts');
  let sandbox: InstanceType<typeof DockerSandbox> | undefined;
  try {
    sandbox = await DockerSandbox.create({
      image,
      warmPoolSize: 0,
      preimport: [],
      sweepOnStart: false,
      egress: {
        allow: [
          { host: ALLOWED, ports: [port], privateAddresses: true },
          { host: REFUSED, ports: [port] },
        ],
        resolve: async host => (host === ALLOWED || host === REFUSED ? ['127.0.0.1'] : []),
      },
    });
    const started = performance.now();
    const result = await sandbox.execute(
      [
        'import urllib.request, urllib.error',
        `print(urllib.request.urlopen("http://${ALLOWED}:${port}/", timeout=20).read().decode())`,
        'try:',
        `    urllib.request.urlopen("http://${REFUSED}:${port}/", timeout=20)`,
        '    print("reached")',
        'except urllib.error.HTTPError as error:',
        '    print(error.code)',
      ].join('\n'),
      { timeoutMs },
    );
    const ms = Math.round(performance.now() - started);
    const [fetched, refused] = result.stdout.trim().split('\n');
    const reason = result.network?.refused[0]?.reason;
    if (
      result.status === 'success' &&
      fetched === token &&
      refused === '403' &&
      reason === 'private-address'
    ) {
      return {
        name,
        ok: true,
        detail: `reached an allowed host and was refused one that resolves to loopback (${ms} ms)`,
      };
    }
    const said = `${result.stdout.trim()} ${result.stderr.trim().slice(-300)}`.trim();
    return { name, ok: false, detail: `${result.status}: ${said || 'no output'}`, fix };
  } catch (error) {
    return { name, ok: false, detail: error instanceof Error ? error.message : String(error), fix };
  } finally {
    await sandbox?.close().catch(() => {});
    server.closeAllConnections();
    await new Promise(resolve => server.close(resolve));
  }
}
