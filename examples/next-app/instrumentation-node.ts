// Node-only half of instrumentation.ts, imported only under the Node runtime so
// the Edge build (the /api/select route) never compiles process signals.
import { closeToolbelt } from './lib/toolbelt';

/** Closes the toolbelt on SIGINT/SIGTERM, then exits. */
export function handleShutdownSignals(): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, async () => {
      await closeToolbelt();
      process.exit(0);
    });
  }
}
