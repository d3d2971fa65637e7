// Node-only half of instrumentation.ts, imported only under the Node runtime so
// the Edge build (the /api/select route) never compiles process signals.
import { type Telemetry, startTelemetry } from './lib/telemetry';
import { closeToolbelt, getToolbelt } from './lib/toolbelt';

let telemetry: Telemetry | undefined;

/** Starts OpenTelemetry when OTEL_EXPORTER_OTLP_ENDPOINT is set (see lib/telemetry.ts). */
export async function startTelemetryFromEnv(): Promise<void> {
  telemetry = await startTelemetry({ env: process.env, serviceName: 'ai-toolbelt-next-example' });
  if (telemetry) console.log(`[telemetry] ${telemetry.description}`);
}

/** Closes the toolbelt on SIGINT/SIGTERM, sends the spans still buffered, then exits. */
export function handleShutdownSignals(): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, async () => {
      await closeToolbelt();
      await telemetry?.shutdown();
      process.exit(0);
    });
  }
}

/**
 * Opens the toolbelt now rather than on the first request (which then finds it open): MCP
 * servers, the sandbox's warm container and the embedding model, with the `[retrieval]` line.
 * Not awaited, so the server is ready meanwhile; a failure is logged and the next request tries
 * again.
 */
export function openToolbeltNow(): void {
  getToolbelt().catch((error: unknown) => {
    console.warn(
      `[toolbelt] opening at start failed (${error instanceof Error ? error.message : String(error)}); the next request tries again`,
    );
  });
}
