// The proxies' socket directory (issue 45, items 1 and 2), host-side: a directory another user
// made or could change is refused with an error naming the fix; the one in use is private to
// this process's user, so no other host user can open a proxy's socket. The tests run as root
// and act as another user (uid 65534, `nobody`) by chown and by a child process that drops to it.
import { spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/errors/invalid-argument-error.ts';
import { resolveEgressOptions } from '../../../src/sandbox/egress/egress-options.ts';
import { EgressGateway } from '../../../src/sandbox/egress/egress-gateway.ts';

const NOBODY = 65534;
// Open to others (0755) down to each case's directory: only the socket directory keeps them out.
const scratch = mkdtempSync(join(tmpdir(), 'egress-socket-dir-'));
chmodSync(scratch, 0o755);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let n = 0;
/** A fresh directory under the scratch one, root's and 0755. */
function fresh(): string {
  const dir = join(scratch, `case-${n++}`);
  mkdirSync(dir, { mode: 0o755 });
  return dir;
}

async function open(socketDir: string) {
  const gateway = new EgressGateway({
    egress: resolveEgressOptions({ allow: ['a.test'], socketDir }),
  });
  try {
    const { spec, link } = await gateway.open({ spec: {}, ttlMs: 60_000 });
    const mounted = spec.HostConfig!.Mounts!.at(-1)!.Source!;
    return { gateway, link, mounted };
  } catch (error) {
    await gateway.close();
    throw error;
  }
}

async function refusal(socketDir: string): Promise<InvalidArgumentError> {
  const error = await open(socketDir).then(
    async ({ gateway }) => {
      await gateway.close();
      return undefined;
    },
    (caught: unknown) => caught,
  );
  expect(InvalidArgumentError.isInstance(error), String(error)).toBe(true);
  expect((error as InvalidArgumentError).argument).toBe('egress.socketDir');
  return error as InvalidArgumentError;
}

/** Connects to a Unix socket as uid/gid 65534 (a child that drops root first); the outcome. */
function connectAsNobody(path: string): Promise<string> {
  const script = `
    process.setgroups([]); process.setgid(${NOBODY}); process.setuid(${NOBODY});
    const socket = require('node:net').connect(${JSON.stringify(path)});
    socket.on('connect', () => { console.log('connected'); socket.destroy(); });
    socket.on('error', error => console.log(error.code));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', chunk => (out += chunk));
    child.stderr.on('data', chunk => (out += chunk));
    child.on('error', reject);
    child.on('close', () => resolve(out.trim()));
  });
}

describe('egress socket directory', () => {
  it('refuses a directory another user made first, naming the owner and the fix', async () => {
    const taken = join(fresh(), 'ai-toolbelt-egress-0');
    mkdirSync(taken, { mode: 0o777 });
    chmodSync(taken, 0o777);
    chownSync(taken, NOBODY, NOBODY);
    const error = await refusal(taken);
    expect(error.message).toContain(`uid ${NOBODY}`);
    expect(error.message).toMatch(/remove it|another directory/i);
  });

  it('refuses a directory of its own that others may write to', async () => {
    const open777 = join(fresh(), 'sockets');
    mkdirSync(open777);
    chmodSync(open777, 0o777);
    expect((await refusal(open777)).message).toMatch(/writable by/);
  });

  it('refuses a symbolic link anywhere on the path', async () => {
    const base = fresh();
    mkdirSync(join(base, 'real'));
    symlinkSync(join(base, 'real'), join(base, 'link'));
    expect((await refusal(join(base, 'link', 'sockets'))).message).toMatch(/symbolic link/);
    expect((await refusal(join(base, 'link'))).message).toMatch(/symbolic link/);
  });

  it('refuses a path under a directory in which another user could rename entries', async () => {
    const theirs = join(fresh(), 'theirs');
    mkdirSync(theirs, { mode: 0o755 });
    chownSync(theirs, NOBODY, NOBODY);
    expect((await refusal(join(theirs, 'sockets'))).message).toContain(`uid ${NOBODY}`);
    const shared = join(fresh(), 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    expect((await refusal(join(shared, 'sockets'))).message).toMatch(/not sticky/);
  });

  it('makes the directory 0700, takes a sticky shared parent, and tightens an older 0711 one', async () => {
    const sticky = join(fresh(), 'sticky');
    mkdirSync(sticky);
    chmodSync(sticky, 0o1777);
    const made = join(sticky, 'sockets');
    const first = await open(made);
    expect(statSync(made).mode & 0o7777).toBe(0o700);
    expect(first.mounted.startsWith(`${made}/`)).toBe(true);
    await first.gateway.close();

    const older = join(fresh(), 'older');
    mkdirSync(older);
    chmodSync(older, 0o711);
    const second = await open(older);
    expect(statSync(older).mode & 0o7777).toBe(0o700);
    await second.gateway.close();
  });

  it("lets no other host user open a live proxy's socket; this process can", async () => {
    expect(process.getuid?.(), 'acting as another user needs root').toBe(0);
    const { gateway, mounted } = await open(join(fresh(), 'sockets'));
    try {
      const socket = join(mounted, 'proxy.sock');
      expect(await connectAsNobody(socket)).toBe('EACCES');
      const net = await import('node:net');
      await new Promise<void>((resolve, reject) =>
        net
          .connect(socket)
          .on('connect', function (this: import('node:net').Socket) {
            this.destroy();
            resolve();
          })
          .on('error', reject),
      );
    } finally {
      await gateway.close();
    }
  });
});
