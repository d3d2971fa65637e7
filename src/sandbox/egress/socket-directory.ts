import { randomBytes } from 'node:crypto';
import { type Stats, constants } from 'node:fs';
import { chmod, lstat, mkdir, open, realpath } from 'node:fs/promises';
import { join, parse, resolve, sep } from 'node:path';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';

/**
 * Makes sure `socketDir` (made here with mode 0700 if missing) is safe to hold the proxies'
 * sockets, and returns its absolute path. Safe means:
 * - it is a directory of this process's user, not a symbolic link, and no other user may enter
 *   it (it is made 0700; one of ours that others may enter but not write, such as the 0711 of
 *   earlier versions, is made 0700), so no other host user can reach a socket in it;
 * - every directory above it is root's or this user's, not a symbolic link, and either not
 *   writable by others or sticky (/tmp), so no other user can rename, remove or replace any
 *   part of the path.
 * What is mounted into a container is a path under it: between this check and dockerd's mount,
 * only root or this user could change anything on that path. Anything else is an
 * `InvalidArgumentError` naming `egress.socketDir` and the fix.
 *
 * @example
 * ```ts
 * const dir = await secureSocketDir('/run/ai-toolbelt-egress');
 * ```
 */
export async function secureSocketDir(socketDir: string): Promise<string> {
  const path = resolve(socketDir);
  const uid = process.getuid?.();
  // No POSIX owners (Windows): there is no gVisor, so no egress runtime, there either.
  if (uid === undefined) return path;
  const fail = (message: string): never => {
    throw new InvalidArgumentError({ argument: 'egress.socketDir', value: socketDir, message });
  };
  const parts = path.split(sep).filter(Boolean);
  let current = parse(path).root;
  checkAbove(current, await lstat(current), uid, fail);
  for (const [i, part] of parts.entries()) {
    current = join(current, part);
    const last = i === parts.length - 1;
    let stats = await lstat(current).catch(missing);
    if (stats === undefined) {
      // Made here, so it is ours; if another user made it first, the checks below see it.
      await mkdir(current, { mode: last ? 0o700 : 0o755 }).catch(existing);
      stats = await lstat(current);
    }
    if (stats.isSymbolicLink()) {
      const target = await realpath(current).then(
        real => join(real, ...parts.slice(i + 1)),
        () => 'the path without links',
      );
      fail(
        `${current} is a symbolic link: pass the real path (${target}), so that what is mounted into containers cannot be redirected`,
      );
    }
    if (last) await checkOwn(current, stats, uid, fail);
    else checkAbove(current, stats, uid, fail);
  }
  return path;
}

/**
 * A new directory for one container's proxy socket under `socketDir` (checked first), with an
 * unguessable name. It is 0755: gVisor checks the host mode of what is mounted against the
 * code's uid (65534); other host users cannot get to it through `socketDir` (0700).
 *
 * @example
 * ```ts
 * const dir = await makeProxyDirectory('/run/ai-toolbelt-egress');
 * ```
 */
export async function makeProxyDirectory(socketDir: string): Promise<string> {
  const dir = join(await secureSocketDir(socketDir), randomBytes(12).toString('hex'));
  await mkdir(dir, { mode: 0o755 });
  await chmod(dir, 0o755);
  return dir;
}

// The sticky bit: in such a directory only an entry's owner (or the directory's) may rename it.
const STICKY = 0o1000;

type Fail = (message: string) => never;

function checkAbove(path: string, stats: Stats, uid: number, fail: Fail): void {
  if (stats.isSymbolicLink()) return; // Reported by the caller, with its target.
  if (!stats.isDirectory()) fail(`${path} is not a directory`);
  if (stats.uid !== 0 && stats.uid !== uid) {
    fail(
      `${path} belongs to uid ${stats.uid}, who could move what is in it; pick a directory whose every parent is root's or this user's (uid ${uid})`,
    );
  }
  if ((stats.mode & 0o022) !== 0 && (stats.mode & STICKY) === 0) {
    fail(
      `${path} is writable by other users and not sticky (mode ${octal(stats.mode)}), so they could swap what is in it; pick another directory`,
    );
  }
}

async function checkOwn(path: string, stats: Stats, uid: number, fail: Fail): Promise<void> {
  if (!stats.isDirectory()) fail(`${path} is not a directory`);
  if (stats.uid !== uid) {
    fail(
      `${path} belongs to uid ${stats.uid}, not to this process's user (uid ${uid}): another user made it first and could reach or replace the proxies' sockets. Remove it, or pass another directory (it is made with mode 0700)`,
    );
  }
  if ((stats.mode & 0o022) !== 0) {
    fail(
      `${path} is writable by other users (mode ${octal(stats.mode)}), who could swap the containers' socket directories: chmod 700 it, or pass another directory`,
    );
  }
  if ((stats.mode & 0o077) === 0) return;
  // Ours and written only by us: close it to others, through a handle that cannot follow a link.
  const handle = await open(
    path,
    constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW,
  );
  try {
    const opened = await handle.stat();
    if (opened.ino !== stats.ino || opened.dev !== stats.dev) fail(`${path} changed while checked`);
    await handle.chmod(0o700);
  } finally {
    await handle.close();
  }
}

function missing(error: NodeJS.ErrnoException): undefined {
  if (error.code === 'ENOENT') return undefined;
  throw error;
}

function existing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'EEXIST') throw error;
}

function octal(mode: number): string {
  return `0${(mode & 0o7777).toString(8)}`;
}
