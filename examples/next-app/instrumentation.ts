// Runs once when the server starts. With OTEL_EXPORTER_OTLP_ENDPOINT set, it starts
// OpenTelemetry (lib/telemetry.ts). `next start` ends the process on SIGTERM
// before async cleanup can finish, which would leave the sandbox's warm
// containers behind; with NEXT_MANUAL_SIG_HANDLE=true (set by `npm start`)
// Next leaves the signals to us, and we close the toolbelt, then exit. Owning
// the process's end, we also open the toolbelt at its start (the log says at
// once which tool retrieval it uses); otherwise the first request opens it.

/** Starts telemetry and registers the shutdown handlers (Node runtime only). */
export async function register(): Promise<void> {
  // This exact test lets Next drop the import from the Edge build (see instrumentation-node.ts).
  if (process.env.NEXT_RUNTIME === 'nodejs') {
    const { handleShutdownSignals, openToolbeltNow, startTelemetryFromEnv } =
      await import('./instrumentation-node');
    await startTelemetryFromEnv();
    if (process.env.NEXT_MANUAL_SIG_HANDLE) {
      handleShutdownSignals();
      // Never while `next build` runs: it would start MCP servers and containers for nothing.
      if (process.env.NEXT_PHASE !== 'phase-production-build') openToolbeltNow();
    }
  }
}
