// The conversation every example test plays: the model calls a tool that
// retrieval selected, runs python with a bug, sees the trimmed error, runs the
// fix, and answers with the result. Only the model is scripted; the MCP
// servers, the sandbox and HTTP are real.
import type { Script } from '../../fixtures/fake-openai/script.ts';

/** What the user asks. */
export const QUESTION = 'What was the average daily high in Oslo over the past week?';

/** The bug in the first python attempt, and the line of the error it causes. */
export const PYTHON_ERROR = "NameError: name 'high' is not defined";

/** The MCP tool retrieval must offer (and the model calls) for {@link QUESTION}. */
export const SELECTED_TOOL = 'temperature_history';

// The average, then a bar chart of the week (which only the fixed program reaches).
const program = (highs: number[], lengthOf: string) =>
  [
    `highs = ${JSON.stringify(highs)}`,
    `average = sum(highs) / len(${lengthOf})`,
    'print(round(average, 1))',
    'import matplotlib.pyplot as plt',
    'fig, ax = plt.subplots(figsize=(6, 3))',
    'ax.bar(range(1, len(highs) + 1), highs, color="#4c78a8")',
    'ax.axhline(average, color="#e45756", linestyle="--", label=f"average {average:.1f} °C")',
    'ax.set(title="Oslo, daily highs", xlabel="day", ylabel="°C")',
    'ax.legend()',
    '',
  ].join('\n');

/** The chart the fixed program draws, in pixels (before cropping to what was drawn). */
export const CHART_SIZE = { width: 600, height: 300 };

/**
 * The fake model's turns. Each reads the previous tool result from the request,
 * so the numbers come from the real MCP server and the answer from the real sandbox.
 *
 * @example
 * await using fake = await startFakeOpenAI({ script: weatherScenario() });
 */
export function weatherScenario(): Script {
  let highs: number[] = [];
  return [
    { toolCalls: [{ name: SELECTED_TOOL, args: { city: 'Oslo', days: 7 } }] },
    request => {
      const history = JSON.parse(request.toolResults.at(-1)?.output ?? '{}') as {
        daily?: Array<{ highC: number }>;
      };
      highs = (history.daily ?? []).map(day => day.highC);
      return { toolCalls: [{ name: 'python', args: { code: program(highs, 'high') } }] };
    },
    () => ({ toolCalls: [{ name: 'python', args: { code: program(highs, 'highs') } }] }),
    request => ({
      text: `The average daily high in Oslo over the past week was ${request.toolResults.at(-1)?.output.split('\n')[0]} °C (chart above).`,
    }),
  ];
}

/** The average the sandbox prints for the real server's data (Oslo, 7 days). */
export const EXPECTED_AVERAGE = '15.0';
