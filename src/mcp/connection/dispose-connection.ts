import { setTimeout as delay } from 'node:timers/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * Closes a client and its transport and, for stdio, makes sure the child
 * process is gone before resolving: a grace period after stdin closes, then
 * SIGTERM, then SIGKILL. (The SDK escalates the same way but does not wait
 * after SIGKILL, and forgets the process when it closes on its own after a
 * failed handshake.) Never throws.
 *
 * @example
 * ```ts
 * await disposeConnection({ client, transport, pid, terminateSession: true });
 * ```
 */
export async function disposeConnection({
  client,
  transport,
  pid,
  terminateSession = false,
  graceMs = 2_000,
}: {
  /** The MCP client, if one was created. */
  client?: Client | undefined;
  /** Its transport. */
  transport?: Transport | undefined;
  /** The stdio child's pid, if there is one. */
  pid?: number | undefined;
  /** Ask an HTTP server to end the session first (only useful while it is healthy). */
  terminateSession?: boolean;
  /** How long each step waits for the child to exit. */
  graceMs?: number;
}): Promise<void> {
  if (terminateSession) await endHttpSession(transport);
  await client?.close().catch(() => {});
  await transport?.close().catch(() => {});
  if (pid === undefined) return;
  for (const signal of [undefined, 'SIGTERM', 'SIGKILL'] as const) {
    if (signal !== undefined) kill(pid, signal);
    if (await exited(pid, graceMs)) return;
  }
}

async function endHttpSession(transport: Transport | undefined): Promise<void> {
  const http = transport as
    { terminateSession?: () => Promise<void>; sessionId?: string } | undefined;
  if (typeof http?.terminateSession !== 'function' || http.sessionId === undefined) return;
  // A courtesy that frees the server's session; a hung server must not hold up close().
  await Promise.race([
    http.terminateSession().catch(() => {}),
    delay(1_000, undefined, { ref: false }),
  ]);
}

async function exited(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (!kill(pid, 0)) return true;
    if (performance.now() >= deadline) return false;
    await delay(10);
  }
}

/** Sends `signal`; false when the process does not exist (any more). */
function kill(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}
