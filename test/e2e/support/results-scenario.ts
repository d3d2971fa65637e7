// A chat whose python cells show values rather than print them: live output while a cell runs, a
// DataFrame's describe() table, a matplotlib line chart (drawn by the page from its data) and
// hostile HTML (a DataFrame holding markup, then IPython's HTML()), which must never run.
import type { Script } from '../../fixtures/fake-openai/script.ts';

/** What the user asks. */
export const RESULTS_QUESTION = 'Count to three, describe a small table, chart growth, show HTML.';

/** Prints as it runs: the page shows the output before the cell ends. */
export const LIVE_CODE = [
  'import time',
  'for i in range(3):',
  '    print(f"tick {i}", flush=True)',
  '    time.sleep(1)',
].join('\n');

/** Ends in `df.describe()`: the cell's main result, a table. */
export const DESCRIBE_CODE = [
  'import pandas as pd',
  'df = pd.DataFrame({"m": ["a", "b"], "v": [1, 2]})',
  'df.describe()',
].join('\n');

/** A figure with one labelled line of three points (its chart data reaches the page). */
export const CHART_CODE = [
  'import matplotlib.pyplot as plt',
  'plt.plot([1, 2, 3], [2, 4, 8], label="growth")',
  'plt.title("Growth")',
].join('\n');

/** Markup that would run if the page rendered it unsanitised. */
export const HOSTILE_IMG = '<img src=x onerror="window.__pwned=1">';
export const HOSTILE_SCRIPT = '<script>window.__pwned=2</script>';

/**
 * A DataFrame of hostile strings (pandas escapes them: they must show as text), then raw hostile
 * HTML as the last expression (the sanitiser must drop the img and script and keep `<b>`).
 */
export const HOSTILE_CODE = [
  'import pandas as pd',
  'from IPython.display import HTML',
  `hostile = pd.DataFrame({"x": [${JSON.stringify(HOSTILE_IMG)}, ${JSON.stringify(HOSTILE_SCRIPT)}]})`,
  'display(hostile)',
  `HTML(${JSON.stringify(HOSTILE_IMG + HOSTILE_SCRIPT + '<b>bold</b>')})`,
].join('\n');

/** The answer after the four cells. */
export const RESULTS_ANSWER = 'Shown above: the count, the summary table, the chart and the HTML.';

/**
 * The fake model's turns: four python calls in a row (one cell each), then the answer.
 *
 * @example
 * fake.setScript(resultsScenario());
 */
export function resultsScenario(): Script {
  return [
    ...[LIVE_CODE, DESCRIBE_CODE, CHART_CODE, HOSTILE_CODE].map(code => ({
      toolCalls: [{ name: 'python', args: { code } }],
    })),
    { text: RESULTS_ANSWER },
  ];
}
