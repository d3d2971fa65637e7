// A data question about a file the user attaches: the model finds the file's path in the
// conversation, runs pandas on it in the real sandbox, saves a summary CSV for download and
// draws a chart. Only the model is scripted.
import type { Script } from '../../fixtures/fake-openai/script.ts';

/** What the user asks, with the file attached. */
export const CSV_QUESTION = 'Total sales per region in the attached file, please, with a chart.';

/** The attachment. */
export const SALES_CSV = {
  name: 'sales.csv',
  mimeType: 'text/csv',
  text: 'region,product,amount\nnorth,tea,3\nsouth,tea,5\nnorth,cake,4\nsouth,cake,1\nnorth,tea,2\n',
};

/** The summary the sandbox writes to /tmp/outputs/summary.csv. */
export const SUMMARY_CSV = 'region,amount\nnorth,9\nsouth,6\n';

/**
 * The fake model's turns: python on the path the conversation names, then an answer.
 *
 * @example
 * await using fake = await startFakeOpenAI({ script: csvScenario() });
 */
export function csvScenario(): Script {
  return [
    request => {
      const path = /\/tmp\/inputs\/[\w.-]+\.csv/.exec(request.lastUserText ?? '')?.[0];
      if (path === undefined) return { text: 'I cannot see an attached file.' };
      const code = [
        'import pandas as pd',
        `df = pd.read_csv("${path}")`,
        'summary = df.groupby("region", as_index=False)["amount"].sum()',
        'summary.to_csv("/tmp/outputs/summary.csv", index=False)',
        'print(summary.to_string(index=False))',
        'summary.plot.bar(x="region", y="amount", legend=False, title="Sales by region")',
        '',
      ].join('\n');
      return { toolCalls: [{ name: 'python', args: { code } }] };
    },
    { text: 'North sold 9 and south 6: the chart is above, and summary.csv is ready to download.' },
  ];
}

/** The follow-up, in the next message, with nothing attached. */
export const CSV_FOLLOW_UP = 'Now chart the amount per product.';

/** What the follow-up prints: from the DataFrame the first turn loaded, still in the interpreter. */
export const PRODUCT_TOTALS = /cake\s+5\ntea\s+10/;

/**
 * Two turns of one chat: `csvScenario`, then a follow-up whose code uses the first turn's
 * `df` without reading the file again (the chat's interpreter kept it), and draws a chart.
 *
 * @example
 * fake.setScript(csvFollowUpScenario());
 */
export function csvFollowUpScenario(): Script {
  const code = [
    'by_product = df.groupby("product")["amount"].sum()',
    'print(by_product.to_string())',
    'by_product.plot.bar(legend=False, title="Sales by product")',
    '',
  ].join('\n');
  return [
    ...(csvScenario() as Extract<Script, unknown[]>),
    { toolCalls: [{ name: 'python', args: { code } }] },
    { text: 'Cake and tea sold 5 each: the second chart is above.' },
  ];
}
