// Figures of bench:sandbox --only kubernetes: the Kubernetes engine beside the Docker engine.
import { measuredOn, ms, num, perSec, ratio, table } from './format.ts';
import type { Results, Row } from './results.ts';
import type { Renderers } from './update-docs.ts';

const n = (row: Row, field: string): number => {
  const value = row[field];
  if (typeof value !== 'number') throw new Error(`${field} is ${JSON.stringify(value)}`);
  return value;
};
const engine = (results: Results, name: 'docker' | 'kubernetes') =>
  results.row('sandbox-kubernetes', { case: 'engines', engine: name });
const measured = (results: Results) =>
  measuredOn(
    results.file('sandbox-kubernetes').machine,
    'npm run bench:sandbox -- --only kubernetes',
  );

function kubernetesTable(results: Results): string {
  const d = engine(results, 'docker');
  const k = engine(results, 'kubernetes');
  const pair = (p50: string, p90: string) => (row: Row) =>
    `${ms(n(row, p50))} / ${ms(n(row, p90))}`;
  // Each row: what, how an engine's value reads, and the field of the ratio (none: no ratio).
  const rows: Array<[string, (row: Row) => string, string | undefined]> = [
    ['cold `print(1)`, p50 / p90', pair('coldP50Ms', 'coldP90Ms'), 'coldP50Ms'],
    ['warm-pool hit, p50 / p90', pair('warmP50Ms', 'warmP90Ms'), 'warmP50Ms'],
    [
      '`print(1)` as a cell of a live interpreter, p50 / p90',
      pair('cellP50Ms', 'cellP90Ms'),
      'cellP50Ms',
    ],
    [
      `sustained, ${n(d, 'callers')} callers, pool of 4, 4 slots`,
      row => perSec(n(row, 'sustainedPerSec')),
      'sustainedPerSec',
    ],
    ['left after close (containers / pods)', row => num(n(row, 'left')), undefined],
  ];
  return [
    table(
      ['metric', 'Docker engine', 'Kubernetes engine', 'Kubernetes / Docker'],
      rows.map(([name, show, field]) => [
        name,
        show(d),
        show(k),
        field ? ratio(n(k, field) / n(d, field)) : '–',
      ]),
    ),
    '',
    `Each engine in turn, the same image, limits and cases, pre-imports off; ${n(d, 'runs')} runs each, throughput over a ${n(d, 'secondsPerWindow')}-second window. The Kubernetes engine is the local single-node cluster of \`scripts/setup-kubernetes.sh\` on the same machine (its pods under the same runsc, through a second containerd and the kubelet, each pod a gVisor sandbox beside its pause container). ${measured(results)}`,
  ].join('\n');
}

function kubernetesSummary(results: Results): string {
  const d = engine(results, 'docker');
  const k = engine(results, 'kubernetes');
  return [
    `**Sandbox on Kubernetes** (\`npm run bench:sandbox -- --only kubernetes\`, the local cluster, same machine, \`print(1)\`): cold p50`,
    `${ms(n(k, 'coldP50Ms'))} (Docker ${ms(n(d, 'coldP50Ms'))}), from the warm pool ${ms(n(k, 'warmP50Ms'))} (Docker ${ms(n(d, 'warmP50Ms'))}), a cell of a live`,
    `interpreter ${ms(n(k, 'cellP50Ms'))} (Docker ${ms(n(d, 'cellP50Ms'))}), sustained ${perSec(n(k, 'sustainedPerSec'))} (Docker ${perSec(n(d, 'sustainedPerSec'))}); ${num(n(k, 'left'))} pods left. See`,
    `[docs/deploy.md](docs/deploy.md#5-on-kubernetes).`,
    '',
    measured(results),
  ].join('\n');
}

export const kubernetesFigures: Renderers = {
  blocks: {
    'kubernetes-table': kubernetesTable,
    'kubernetes-summary': kubernetesSummary,
  },
  values: {},
};
