// Node-only half of instrumentation.ts, imported only under the Node runtime so
// the Edge build (the /api/select route) never compiles process signals.
import { type Telemetry, startTelemetry } from './lib/telemetry';
import { closeToolbelt } from './lib/toolbelt';

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
