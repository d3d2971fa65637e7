import { SandboxBusyError } from '../../errors/sandbox-busy-error.ts';
import type { EngineSet } from '../engines/engine-set.ts';
import type { ConversationHistory, UserInterpreter } from './history/conversation-history.ts';
import type { KnownInterpreter } from './bounds/placement-gate.ts';

/**
 * Makes room for one more interpreter of `userId` under `maxPerUser`: reads the user's list
 * from the store (every replica records there), keeps the entries still running (an inspect
 * each, only when an interpreter is placed) and removes the least recently used idle ones past
 * the bound (their conversations are restored when they go on). Returns the live list; throws
 * `SandboxBusyError` (`interpreters`) when all of them are busy in this process.
 *
 * @example
 * ```ts
 * const mine = await makeRoomForUser({ userId, history, engines, known, maxPerUser: 3 });
 * ```
 */
export async function makeRoomForUser({
  userId,
  history,
  engines,
  known,
  maxPerUser,
}: {
  /** Whose interpreters. */
  userId: string;
  /** Where the user's list is kept. */
  history: ConversationHistory;
  /** The engines the entries name. */
  engines: EngineSet;
  /** Interpreters this process used (last use; busy ones are spared). */
  known: Map<string, KnownInterpreter>;
  /** The bound. */
  maxPerUser: number;
}): Promise<UserInterpreter[]> {
  const entries = await history.userInterpreters(userId);
  const alive = await Promise.all(
    entries.map(async entry => {
      const engine = engines.engines.find(e => e.name === entry.engine && e.state === 'up');
      if (engine === undefined) return false;
      try {
        return (await engine.driver.state(entry.containerId))?.running === true;
      } catch {
        return false;
      }
    }),
  );
  const mine = entries.filter((_, i) => alive[i]);
  const lastUse = (entry: UserInterpreter) =>
    known.get(entry.containerId)?.usedAt ?? entry.startedAt;
  while (mine.length >= maxPerUser) {
    const idle = mine.filter(entry => known.get(entry.containerId)?.busy !== true);
    const victim = idle.sort((a, b) => lastUse(a) - lastUse(b))[0];
    if (victim === undefined)
      throw new SandboxBusyError({
        resource: 'interpreters',
        limit: maxPerUser,
        retryAfterMs: 5_000,
      });
    mine.splice(mine.indexOf(victim), 1);
    known.delete(victim.containerId);
    const engine = engines.engines.find(e => e.name === victim.engine);
    await engine?.remove(victim.containerId);
  }
  return mine;
}
