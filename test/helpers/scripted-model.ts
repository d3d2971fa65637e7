import type {
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

/** One scripted model answer: text, or tool calls. */
export type ScriptedTurn =
  | { text: string }
  /** `id` overrides the call's id (unique by default), as providers that number calls do. */
  | { toolCalls: { name: string; input: unknown; id?: string }[] };

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

let callIds = 0;

function content(turn: ScriptedTurn): LanguageModelV4Content[] {
  if ('text' in turn) return [{ type: 'text', text: turn.text }];
  return turn.toolCalls.map(call => ({
    type: 'tool-call',
    toolCallId: call.id ?? `call-${++callIds}`,
    toolName: call.name,
    input: JSON.stringify(call.input),
  }));
}

function streamParts(turn: ScriptedTurn): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  for (const part of content(turn)) {
    if (part.type === 'text') {
      parts.push(
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: part.text },
        { type: 'text-end', id: 't' },
      );
    } else if (part.type === 'tool-call') {
      parts.push(part);
    }
  }
  const finish = 'text' in turn ? 'stop' : 'tool-calls';
  parts.push({ type: 'finish', usage, finishReason: { unified: finish, raw: finish } });
  return parts;
}

/**
 * A language model stand-in that answers from a script, one turn per call,
 * for both generate and stream, recording each call's options. A turn may be
 * a function of the call, to answer based on what the model was given.
 */
export function scriptedModel(
  script: (ScriptedTurn | ((call: LanguageModelV4CallOptions) => ScriptedTurn))[],
): MockLanguageModelV4 & {
  calls: LanguageModelV4CallOptions[];
  toolNamesPerCall: () => string[][];
} {
  const calls: LanguageModelV4CallOptions[] = [];
  const next = (options: LanguageModelV4CallOptions): ScriptedTurn => {
    calls.push(options);
    const entry = script[calls.length - 1];
    if (entry === undefined)
      throw new Error(`scripted model: no turn ${calls.length} in a script of ${script.length}`);
    return typeof entry === 'function' ? entry(options) : entry;
  };
  const model = new MockLanguageModelV4({
    doGenerate: async options => {
      const turn = next(options);
      const finish = 'text' in turn ? 'stop' : 'tool-calls';
      return {
        content: content(turn),
        finishReason: { unified: finish, raw: finish },
        usage,
        warnings: [],
      };
    },
    doStream: async options => ({
      stream: simulateReadableStream({ chunks: streamParts(next(options)) }),
    }),
  });
  return Object.assign(model, {
    calls,
    toolNamesPerCall: () => calls.map(call => (call.tools ?? []).map(tool => tool.name)),
  });
}

/** The error texts the model received for tool calls, as of its latest call. */
export function errorTexts(model: { calls: LanguageModelV4CallOptions[] }): string[] {
  return (model.calls.at(-1)?.prompt ?? []).flatMap(message =>
    message.role === 'tool'
      ? message.content.flatMap(part =>
          part.type === 'tool-result' && part.output.type === 'error-text'
            ? [part.output.value]
            : [],
        )
      : [],
  );
}

/** The repair decisions the python tool recorded with the failures the model's last call saw. */
export function repairDecisions(model: { calls: LanguageModelV4CallOptions[] }): string[] {
  return (model.calls.at(-1)?.prompt ?? []).flatMap(message =>
    message.role === 'tool'
      ? message.content.flatMap(part => {
          if (part.type !== 'tool-result' || part.output.type !== 'error-text') return [];
          const record = (
            part.output.providerOptions?.aiToolbelt as {
              repair?: { decision: string; reason: string };
            }
          )?.repair;
          return record ? [`${record.decision}:${record.reason}`] : [];
        })
      : [],
  );
}
