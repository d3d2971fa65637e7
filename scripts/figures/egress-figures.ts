// Figures of bench:egress: what the egress allow-list costs a container start, a pip install
// and a download.
import { measuredOn, ms, num, ratio } from './format.ts';
import type { Results, Row } from './results.ts';
import type { Renderers } from './update-docs.ts';

const n = (row: Row, field: string): number => {
  const value = row[field];
  if (typeof value !== 'number') throw new Error(`${field} is ${JSON.stringify(value)}`);
  return value;
};
const mibs = (x: number) => `${num(x)} MiB/s`;

function egressFigures(results: Results): string {
  const file = results.file('egress');
  const start = results.row('egress', { case: 'start' });
  const pip = results.row('egress', { case: 'pip' });
  const t = results.row('egress', { case: 'throughput' });
  const leaked = results.row('egress', { case: 'leaked' });
  return [
    `- **Start**: a cold one-shot \`print(1)\` with a policy p50 ${ms(n(start, 'egressP50Ms'))} against ${ms(n(start, 'plainP50Ms'))} without`,
    `  (${ratio(n(start, 'egressOverPlain'))}, ${n(start, 'runs')} runs each, alternating): the proxy, the socket's directory and the forwarder.`,
    `- **pip**: a one-shot run with \`%pip install\` of a small wheel from a local index p50 ${ms(n(pip, 'installP50Ms'))} against`,
    `  ${ms(n(pip, 'baselineP50Ms'))} for the same run without the line (pip itself about ${ms(n(pip, 'pipP50Ms'))}: starting pip under gVisor).`,
    `- **Download** (${n(t, 'bodyMiB')} MiB from a server on loopback, p50 of ${n(t, 'fetches')}): from the host ${mibs(n(t, 'hostDirectMiBPerSec'))} direct and`,
    `  ${mibs(n(t, 'hostProxyMiBPerSec'))} through a proxy (${ratio(n(t, 'proxyOverDirect'))}); from inside the sandbox through its forwarder and proxy`,
    `  ${mibs(n(t, 'sandboxMiBPerSec'))}. ${num(n(leaked, 'leaked'))} containers and ${num(n(leaked, 'socketDirsLeft'))} socket directories were left.`,
    '',
    measuredOn(file.machine, file.command),
  ].join('\n');
}

export const egressFigureRenderers: Renderers = {
  blocks: { 'egress-figures': egressFigures },
  values: {},
};
