export { configureTelemetry, type TelemetryOptions } from './configure-telemetry.ts';
