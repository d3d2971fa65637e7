import { type Attributes, SpanKind, context, propagation } from '@opentelemetry/api';
import { sha256Base64Url } from '../util/sha256.ts';
import { ATTR, SPAN } from './attributes.ts';
import { telemetrySettings } from './configure-telemetry.ts';
import { instruments } from './instruments.ts';
import { activeTracer, errorType, inSpan, markFailed } from './tracer.ts';

/** The MCP methods ai-toolbelt traces. */
export type McpMethod = 'tools/call' | 'tools/list' | 'initialize';

/** Trace context for a request's `params._meta` (`traceparent`, `tracestate`; never `baggage`). */
export type McpTraceMeta = Record<string, string>;

/**
 * Sends one MCP request inside an MCP client span (`tools/call {tool}`, `tools/list`,
 * `initialize`; kind CLIENT) and records `mcp.client.operation.duration`. `send` gets the
 * trace context to put in the request's `params._meta`, as the MCP semantic conventions
 * propagate it, so instrumented servers join the trace (undefined when nobody traces). A
 * `CallToolResult` with `isError` marks the span `error.type = tool_error`. Without a tracer
 * or meter, `send` runs alone.
 *
 * @example
 * ```ts
 * const result = await traceMcpRequest({ method: 'tools/call', server: 'docs', tool: 'search', client, send: meta => client.callTool({ name: 'search', arguments: args, ...(meta ? { _meta: meta } : {}) }) });
 * ```
 */
export async function traceMcpRequest<T>({
  method,
  server,
  tool,
  toolCallId,
  args,
  client,
  page,
  send,
}: {
  /** The request's method. */
  method: McpMethod;
  /** The server's configured name. */
  server: string;
  /** For `tools/call`: the tool's server-side name. */
  tool?: string | undefined;
  /** For `tools/call`: the AI SDK's tool call id. */
  toolCallId?: string | undefined;
  /** For `tools/call`: the arguments (recorded only with `recordInputs`). */
  args?: Record<string, unknown> | undefined;
  /** The client (or transport holder) whose session the request goes over. */
  client?: object | undefined;
  /** For `tools/list`: the page number, from 1. */
  page?: number | undefined;
  /** Sends the request with the trace context for `params._meta`. */
  send: (meta: McpTraceMeta | undefined) => Promise<T>;
}): Promise<T> {
  const tracer = activeTracer();
  const meter = instruments();
  if (tracer === undefined && meter === undefined) return send(undefined);
  const started = performance.now();
  let failure: string | undefined;
  try {
    if (tracer === undefined) {
      const result = await send(undefined);
      if (isToolError(result)) failure = 'tool_error';
      return result;
    }
    return await inSpan({
      tracer,
      name: tool === undefined ? method : `${method} ${tool}`,
      kind: SpanKind.CLIENT,
      attributes: requestAttributes({ method, server, tool, toolCallId, args, page }),
      classify: mcpErrorType,
      run: async span => {
        const meta = traceContext();
        const result = await send(meta);
        // The session id is known once `initialize` answered.
        span.setAttributes(transportAttributes((client as { transport?: unknown })?.transport));
        if (isToolError(result)) {
          failure = 'tool_error';
          markFailed(span, undefined, failure);
        }
        if (method === 'tools/list' && Array.isArray((result as { tools?: unknown }).tools)) {
          span.setAttribute(ATTR.mcpTools, (result as { tools: unknown[] }).tools.length);
        }
        return result;
      },
    });
  } catch (error) {
    failure = mcpErrorType(error);
    throw error;
  } finally {
    meter?.mcpOperationDuration.record((performance.now() - started) / 1000, {
      [ATTR.mcpMethod]: method,
      [ATTR.mcpServer]: server,
      ...(tool === undefined ? {} : { [ATTR.toolName]: tool }),
      ...(failure === undefined ? {} : { [ATTR.errorType]: failure }),
    });
  }
}

function requestAttributes({
  method,
  server,
  tool,
  toolCallId,
  args,
  page,
}: {
  method: McpMethod;
  server: string;
  tool?: string | undefined;
  toolCallId?: string | undefined;
  args?: Record<string, unknown> | undefined;
  page?: number | undefined;
}): Attributes {
  const call = method === 'tools/call';
  return {
    [ATTR.mcpMethod]: method,
    [ATTR.mcpServer]: server,
    ...(call ? { [ATTR.operationName]: 'execute_tool' } : {}),
    ...(tool === undefined ? {} : { [ATTR.toolName]: tool }),
    ...(toolCallId === undefined ? {} : { [ATTR.toolCallId]: toolCallId }),
    ...(page === undefined ? {} : { [ATTR.mcpPage]: page }),
    ...(call && args !== undefined && telemetrySettings().recordInputs
      ? { [ATTR.toolCallArguments]: JSON.stringify(args) }
      : {}),
  };
}

// The active span's W3C trace context as the app's propagator writes it, without baggage:
// baggage holds whatever the app put there (user ids, tenant names), and MCP servers are
// often someone else's. Undefined when the propagator writes no trace context.
function traceContext(): McpTraceMeta | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  const meta: McpTraceMeta = {};
  for (const key of ['traceparent', 'tracestate'])
    if (typeof carrier[key] === 'string') meta[key] = carrier[key];
  return Object.keys(meta).length > 0 ? meta : undefined;
}

// Read from the transport: stdio children have a pid, Streamable HTTP a session.
function transportAttributes(transport: unknown): Attributes {
  if (transport === null || typeof transport !== 'object') return {};
  const { sessionId, protocolVersion } = transport as {
    sessionId?: unknown;
    protocolVersion?: unknown;
  };
  const stdio = 'startedPid' in transport || 'pid' in transport;
  return {
    ...(stdio ? { [ATTR.networkTransport]: 'pipe' } : {}),
    ...('sessionId' in transport ? { [ATTR.networkTransport]: 'tcp' } : {}),
    // A session id lets whoever holds it speak in the session: traces carry a digest of it.
    ...(typeof sessionId === 'string' && sessionId !== ''
      ? { [ATTR.mcpSessionId]: sha256Base64Url(`mcp-session:${sessionId}`).slice(0, 22) }
      : {}),
    ...(typeof protocolVersion === 'string' ? { [ATTR.mcpProtocolVersion]: protocolVersion } : {}),
  };
}

function isToolError(result: unknown): boolean {
  return (result as { isError?: unknown } | null)?.isError === true;
}

/** A JSON-RPC error's code (`-32602`), else the error's class name. */
function mcpErrorType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' && Number.isInteger(code) ? String(code) : errorType(error);
}

/**
 * Runs a sign-in step (`finishAuth`: the code exchange) inside an `ai_toolbelt.mcp.sign_in`
 * span. Neither codes, states, tokens nor URLs are recorded.
 *
 * @example
 * ```ts
 * await traceSignIn({ server: 'github', run: () => auth.finish({ code, state }) });
 * ```
 */
export async function traceSignIn<T>({
  server,
  run,
}: {
  /** The server's configured name. */
  server: string;
  /** The sign-in step. */
  run: () => Promise<T>;
}): Promise<T> {
  const tracer = activeTracer();
  if (tracer === undefined) return run();
  return inSpan({
    tracer,
    name: SPAN.mcpSignIn,
    kind: SpanKind.CLIENT,
    attributes: { [ATTR.mcpServer]: server },
    run,
  });
}

/**
 * Counts MCP reconnect attempts and reconnects given up (`ai_toolbelt.mcp.reconnects`) from a
 * connection's lifecycle events.
 *
 * @example
 * ```ts
 * recordMcpEvent({ type: 'reconnecting', server: 'fs' });
 * ```
 */
export function recordMcpEvent(event: { type: string; server?: string | undefined }): void {
  if ((event.type !== 'reconnecting' && event.type !== 'gave-up') || event.server === undefined)
    return;
  instruments()?.mcpReconnects.add(1, {
    [ATTR.mcpServer]: event.server,
    [ATTR.mcpOutcome]: event.type === 'reconnecting' ? 'attempt' : 'gave-up',
  });
}
