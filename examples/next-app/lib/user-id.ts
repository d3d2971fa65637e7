import { randomUUID } from 'node:crypto';
import { cookies } from 'next/headers';

/**
 * This browser's user id. The example has no login, so each browser gets a
 * random id in an HTTP-only cookie (set by the first chat request); a real
 * app takes the id from its session. Route handlers only.
 *
 * @example
 * ```ts
 * const mine = await toolbox.forUser({ userId: await currentUserId() });
 * ```
 */
export async function currentUserId(): Promise<string> {
  const jar = await cookies();
  const known = jar.get('uid')?.value;
  if (known !== undefined && /^[\w-]{16,64}$/.test(known)) return known;
  const fresh = randomUUID();
  jar.set('uid', fresh, { httpOnly: true, sameSite: 'lax', path: '/' });
  return fresh;
}
