// Figures of bench:agent-sandbox: the Kubernetes engine through agent-sandbox's claims beside the
// same engine making its own pods.
import { measuredOn, ms, num, ratio, table } from './format.ts';
import type { Results, Row } from './results.ts';
import type { Renderers } from './update-docs.ts';

const FILE = 'sandbox-agent-sandbox';

const n = (row: Row, field: string): number => {
  const value = row[field];
  if (typeof value !== 'number') throw new Error(`${field} is ${JSON.stringify(value)}`);
  return value;
};

function agentSandboxTable(results: Results): string {
  const own = results.row(FILE, { case: 'agent-sandbox', engine: 'kubernetes' });
  const claimed = results.row(FILE, { case: 'agent-sandbox', engine: 'kubernetes+agent-sandbox' });
  const pair = (p50: string, p90: string) => (row: Row) =>
    `${ms(n(row, p50))} / ${ms(n(row, p90))}`;
  const rows: Array<[string, (row: Row) => string, string | undefined]> = [
    ['cold `print(1)`, p50 / p90', pair('coldP50Ms', 'coldP90Ms'), 'coldP50Ms'],
    ['warm `print(1)`, p50 / p90', pair('warmP50Ms', 'warmP90Ms'), 'warmP50Ms'],
    ['claims left after close', row => num(n(row, 'claimsLeft')), undefined],
  ];
  return [
    table(
      ['metric', 'own pods', 'agent-sandbox claims', 'claims / own'],
      rows.map(([name, show, field]) => [
        name,
        show(own),
        show(claimed),
        field ? ratio(n(claimed, field) / n(own, field)) : '–',
      ]),
    ),
    '',
    `The local cluster, one namespace, the same image, limits and cases, pre-imports off; ${n(own, 'runs')} runs each. Cold: no warm pod (a claim the controller serves with a new Sandbox; a pod the engine creates). Warm: a Ready warm pod (a claim bound to one of a SandboxWarmPool of 2; a pod of the engine's own pool of 2). ${measuredOn(results.file(FILE).machine, 'npm run bench:agent-sandbox')}`,
  ].join('\n');
}

export const agentSandboxFigures: Renderers = {
  blocks: { 'agent-sandbox-table': agentSandboxTable },
  values: {},
};
