// Scripted multi-turn conversations from a dev set, run through the selection middleware
// the way the AI SDK drives it (transformParams, then the model, then wrapGenerate, whose
// result becomes the next prompt's assistant message), with no state kept between
// requests but the conversation itself. Used by bench/middleware.ts.
import type { LanguageModelMiddleware } from 'ai';
import type { EvalQuery } from '../src/retrieval/eval/catalog-file.ts';
import type { ToolDescriptor } from '../src/retrieval/types.ts';
import type { ToolSelector } from '../src/middleware/selection/tool-selector.ts';

// Short follow-ups people type after an answer: little content of their own.
const FOLLOW_UPS = [
  'yes, go ahead',
  'now do the same for Berlin',
  'and for last week?',
  'ok, try it again with the other one',
  'thanks, can you repeat that for my second account',
];

/** Each conversation: a request, a follow-up, another request, a follow-up. */
export function buildConversations(
  queries: readonly EvalQuery[],
): { text: string; gold: string[] }[][] {
  const out: { text: string; gold: string[] }[][] = [];
  for (let i = 0; i + 1 < queries.length; i += 2) {
    const [a, b] = [queries[i] as EvalQuery, queries[i + 1] as EvalQuery];
    out.push([
      { text: a.query, gold: a.gold },
      { text: FOLLOW_UPS[i % FOLLOW_UPS.length] as string, gold: a.gold },
      { text: b.query, gold: b.gold },
      { text: FOLLOW_UPS[(i + 1) % FOLLOW_UPS.length] as string, gold: b.gold },
    ]);
  }
  return out;
}

type Prompt = { role: string; content: any }[];

/**
 * Runs every conversation: per turn, one model call that calls the turn's gold tools
 * that were offered (a model cannot call what it was not given), then one final call.
 * Returns the share of calls whose tool list is byte-identical to the previous call's,
 * the share of the fresh top-k each turn's list holds, and of the gold tools.
 */
export async function runConversations({
  middleware,
  selector,
  conversations,
  catalog,
  topK,
}: {
  middleware: LanguageModelMiddleware;
  /** A fresh selector over the same index, for the per-turn top-k. */
  selector: ToolSelector;
  conversations: { text: string; gold: string[] }[][];
  catalog: readonly ToolDescriptor[];
  topK: number;
}) {
  const callTools = catalog.map(t => ({
    type: 'function' as const,
    name: t.name,
    description: t.description ?? '',
    inputSchema: (t.inputSchema ?? { type: 'object' }) as never,
  }));
  let calls = 0;
  let identical = 0;
  let freshShare = 0;
  let goldShare = 0;
  let turns = 0;
  let ids = 0;
  for (const conversation of conversations) {
    const prompt: Prompt = [];
    let previous: string | undefined;
    for (const { text, gold } of conversation) {
      prompt.push({ role: 'user', content: [{ type: 'text', text }] });
      for (const step of ['tools', 'final'] as const) {
        const params = await middleware.transformParams!({
          type: 'generate',
          params: { prompt: prompt as never, tools: [...callTools] },
          model: undefined as never,
        });
        const sent = (params.tools ?? []).map(tool => tool.name);
        const wire = JSON.stringify(params.tools);
        if (previous !== undefined) {
          calls++;
          if (wire === previous) identical++;
        }
        previous = wire;
        if (step === 'tools') {
          turns++;
          const fresh = await selector.rank(text, catalog, topK);
          freshShare +=
            fresh.length === 0 ? 1 : fresh.filter(h => sent.includes(h.name)).length / fresh.length;
          goldShare += gold.filter(name => sent.includes(name)).length / gold.length;
        }
        const called = step === 'tools' ? gold.filter(name => sent.includes(name)) : [];
        const content =
          called.length > 0
            ? called.map(name => ({
                type: 'tool-call',
                toolCallId: `c${++ids}`,
                toolName: name,
                input: '{}',
              }))
            : [{ type: 'text', text: 'done' }];
        const result = await middleware.wrapGenerate!({
          doGenerate: async () =>
            ({
              content,
              finishReason: { unified: 'stop', raw: 'stop' },
              usage: {},
              warnings: [],
            }) as never,
          doStream: undefined as never,
          params,
          model: undefined as never,
        });
        // As the SDK does: response parts keep their providerMetadata as providerOptions.
        prompt.push({
          role: 'assistant',
          content: result.content.map((part: any) => {
            const { providerMetadata, ...rest } = part;
            return { ...rest, ...(providerMetadata ? { providerOptions: providerMetadata } : {}) };
          }),
        });
        if (called.length > 0) {
          prompt.push({
            role: 'tool',
            content: content.map((part: any) => ({
              type: 'tool-result',
              toolCallId: part.toolCallId,
              toolName: part.toolName,
              output: { type: 'text', value: 'ok' },
            })),
          });
        }
        if (called.length === 0) break; // a text answer ends the turn
      }
    }
  }
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return {
    conversations: conversations.length,
    calls,
    identicalToolListRate: round(identical / calls),
    recallVsFresh: round(freshShare / turns),
    goldRecall: round(goldShare / turns),
  };
}
