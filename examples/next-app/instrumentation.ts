// Runs once when the server starts. `next start` ends the process on SIGTERM
// before async cleanup can finish, which would leave the sandbox's warm
// containers behind; with NEXT_MANUAL_SIG_HANDLE=true (set by `npm start`)
// Next leaves the signals to us, and we close the toolbelt, then exit.

/** Registers the shutdown handlers (Node runtime, manual signal handling only). */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== 'nodejs' || !process.env.NEXT_MANUAL_SIG_HANDLE) return;
  const { closeToolbelt } = await import('./lib/toolbelt');
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, async () => {
      await closeToolbelt();
      process.exit(0);
    });
  }
}
