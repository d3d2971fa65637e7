import type { PythonAttemptEvent } from './python-tool-output.ts';

/** The part {@link repairTimeline} writes: one per attempt, updated in place as it moves on. */
export type RepairDataPart = { type: 'data-repair'; id: string; data: PythonAttemptEvent };

/**
 * An `onAttempt` for the python tool that writes each attempt as a
 * `data-repair` part into a UI message stream, for apps that show repairs as
 * a separate timeline. Parts share an id per attempt, so `running` ->
 * `failed` -> `success` replace each other in the client.
 *
 * @example
 * ```ts
 * const stream = createUIMessageStream({
 *   execute({ writer }) {
 *     const tools = { python: pythonTool({ sandbox, onAttempt: repairTimeline(writer) }) };
 *     writer.merge(toUIMessageStream({ stream: streamText({ model, tools, messages }).stream, tools }));
 *   },
 * });
 * ```
 */
export function repairTimeline(writer: {
  write(part: RepairDataPart): void;
}): (event: PythonAttemptEvent) => void {
  return event =>
    writer.write({ type: 'data-repair', id: `${event.toolCallId}:${event.attempt}`, data: event });
}
