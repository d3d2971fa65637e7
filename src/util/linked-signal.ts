/**
 * A child AbortSignal for one request, aborted when `parent` aborts. The MCP
 * SDK adds an abort listener per request and never removes it, so passing a
 * long-lived signal straight through would leak one listener per call; the
 * child is dropped after the request and `dispose()` unhooks it from `parent`.
 *
 * @example
 * ```ts
 * const link = linkSignal(abortSignal);
 * try { await client.callTool(params, undefined, { signal: link.signal }); } finally { link.dispose(); }
 * ```
 */
export function linkSignal(parent: AbortSignal | undefined): {
  signal: AbortSignal;
  dispose: () => void;
  /** Aborts the child only (e.g. our own timeout). */
  abort: (reason: unknown) => void;
} {
  const controller = new AbortController();
  const abort = (reason: unknown) => controller.abort(reason);
  if (parent === undefined) return { signal: controller.signal, dispose: () => {}, abort };
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, dispose: () => {}, abort };
  }
  const onAbort = () => controller.abort(parent.reason);
  parent.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    dispose: () => parent.removeEventListener('abort', onAbort),
    abort,
  };
}
