import {
  type Attributes,
  type Context,
  type Span,
  type SpanKind,
  type Tracer,
  SpanStatusCode,
  context,
  trace,
} from '@opentelemetry/api';
import { ATTR } from './attributes.ts';
import { telemetrySettings } from './configure-telemetry.ts';

/** The instrumentation scope of every span and metric the library records. */
export const SCOPE = { name: 'ai-toolbelt', version: '0.1.0' } as const;

type MaybeProxy = { getDelegateTracer?: (name: string, version?: string) => Tracer | undefined };

/**
 * The tracer to record with, or undefined when nobody listens: no provider is registered
 * (the global one is the API's proxy without a delegate) or telemetry is switched off.
 * This is the no-op fast path: callers check it first and, when it is undefined, run
 * exactly the code they ran before telemetry existed, without creating a span, a context
 * or an attribute object.
 *
 * @example
 * ```ts
 * const tracer = activeTracer();
 * const result = tracer === undefined ? await work() : await inSpan({ tracer, name, run: work });
 * ```
 */
export function activeTracer(): Tracer | undefined {
  const { enabled, tracerProvider } = telemetrySettings();
  if (!enabled) return undefined;
  const provider = tracerProvider ?? trace.getTracerProvider();
  // The global provider is the API's ProxyTracerProvider (possibly another copy of the API):
  // its delegate tracer is undefined until an SDK registers, and asking creates nothing.
  const proxy = provider as MaybeProxy;
  if (typeof proxy.getDelegateTracer === 'function') {
    return proxy.getDelegateTracer(SCOPE.name, SCOPE.version);
  }
  return provider.getTracer(SCOPE.name, SCOPE.version);
}

/**
 * Runs `run` inside a new span made the active one (so spans started within nest under it),
 * ends the span when `run` settles, and marks it failed when `run` throws.
 *
 * @example
 * ```ts
 * await inSpan({ tracer, name: 'ai_toolbelt.sandbox.run', run: span => sandbox.execute(code) });
 * ```
 */
export async function inSpan<T>({
  tracer,
  name,
  kind,
  attributes,
  parent = context.active(),
  classify = errorType,
  run,
}: {
  /** From {@link activeTracer}. */
  tracer: Tracer;
  /** The span's name. */
  name: string;
  /** Span kind (internal by default). */
  kind?: SpanKind;
  /** Attributes known at the start (samplers see these). */
  attributes?: Attributes;
  /** The parent context; the active one by default. */
  parent?: Context;
  /** The `error.type` of an error `run` throws. */
  classify?: (error: unknown) => string;
  /** The work; the span is active while it runs. */
  run: (span: Span, active: Context) => Promise<T>;
}): Promise<T> {
  const span = tracer.startSpan(
    name,
    { ...(kind === undefined ? {} : { kind }), ...(attributes ? { attributes } : {}) },
    parent,
  );
  const active = trace.setSpan(parent, span);
  try {
    return await context.with(active, () => run(span, active));
  } catch (error) {
    markFailed(span, error, classify(error));
    throw error;
  } finally {
    span.end();
  }
}

/**
 * Marks a span failed: `error.type` and the status carry the error's class name only. Messages
 * stay out of traces: they can hold tool output, paths or server replies, and the app gets the
 * typed error itself.
 *
 * @example
 * ```ts
 * markFailed(span, new McpTimeoutError({ server, operation: 'tools/call', timeoutMs }));
 * ```
 */
export function markFailed(span: Span, error: unknown, type: string = errorType(error)): void {
  span.setAttribute(ATTR.errorType, type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

/** A low-cardinality name for an error: its class name (`ToolbeltMcpTimeoutError`), or `_OTHER`. */
export function errorType(error: unknown): string {
  if (error instanceof Error && error.name !== '' && error.name.length <= 100) return error.name;
  const name = (error as { name?: unknown } | null)?.name;
  return typeof name === 'string' && name !== '' && name.length <= 100 ? name : '_OTHER';
}
