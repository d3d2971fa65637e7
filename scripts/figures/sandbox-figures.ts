// Figures of bench:sandbox (basic, sizing, data stack, conversation), bench:hardening and
// bench:fleet.
import { measuredOn, mib, ms, msOrS, num, pct, perSec, ratio, table } from './format.ts';
import type { Results, Row } from './results.ts';
import type { Renderers } from './update-docs.ts';

const n = (row: Row, field: string): number => {
  const value = row[field];
  if (typeof value !== 'number') throw new Error(`${field} is ${JSON.stringify(value)}`);
  return value;
};
const latency = (results: Results) => results.row('sandbox', { case: 'latency' });
const displayRunner = (results: Results) =>
  results.row('display-runner', { bench: 'display-runner' });
const throughput = (results: Results) => results.row('sandbox', { case: 'throughput' });
const sizing = (results: Results, preimport: boolean) =>
  results.row('sizing', { bench: 'sizing', preimport });
const preimportCost = (results: Results) => results.row('sizing', { case: 'preimport-cost' });
const dataStack = (results: Results, preimport: boolean) =>
  results.row('data-stack', { snippet: 'pandas+chart', preimport });
const burst = (results: Results) =>
  results.row('conversation-burst', { bench: 'conversation-burst' });
const cpuSeconds = (x: number) => `${num(x, x < 10 ? 1 : 0)} CPU-seconds`;

const rounds = (t: Row): string => {
  const per = t.perRound as Record<string, number[]>;
  const names: Record<string, string> = {
    sustained: 'sandbox',
    floor: 'floor',
    floorAtMarker: 'released at the marker',
  };
  return Object.entries(names)
    .map(([key, name]) => `${name} ${per[key]!.map(x => num(x, 2)).join(' / ')}`)
    .join('; ');
};
// Negative is noise between rounds, not a gain from holding the slot.
const holdCost = (t: Row): string =>
  n(t, 'slotHoldCost') > 0
    ? pct(n(t, 'slotHoldCost'))
    : `nothing measurable (${pct(n(t, 'slotHoldCost'))}, within the rounds' spread)`;

function sandboxTable(results: Results): string {
  const l = latency(results);
  const t = throughput(results);
  const leaked = n(results.row('sandbox', { case: 'leaked' }), 'leaked');
  return [
    table(
      ['metric', 'value'],
      [
        [
          'cold `print(1)` p50 / p90, to its result (create+start+run)',
          `${ms(n(l, 'coldP50Ms'))} / ${ms(n(l, 'coldP90Ms'))}`,
        ],
        [
          'cold `print(1)` p50 / p90, to its container gone (+remove)',
          `${ms(n(l, 'coldRemovedP50Ms'))} / ${ms(n(l, 'coldRemovedP90Ms'))}`,
        ],
        [
          'warm-pool hit p50 / p90, to its result',
          `${ms(n(l, 'warmP50Ms'))} / ${ms(n(l, 'warmP90Ms'))}`,
        ],
        ['warm / cold (to the result)', ratio(n(l, 'warmOverCold'))],
        [
          `sustained, ${n(t, 'callers')} callers, pool of ${n(t, 'warmPoolSize')}, ${n(t, 'maxConcurrentExecutions')} slots`,
          perSec(n(t, 'sustainedPerSec')),
        ],
        [
          'engine floor (same containers and pipelining, bare dockerode)',
          perSec(n(t, 'floorPerSec')),
        ],
        ['sustained / floor', ratio(n(t, 'sustainedOverFloor'))],
        [
          'floor with the slot given back at the done marker',
          perSec(n(t, 'floorReleasedAtMarkerPerSec')),
        ],
        ['throughput cost of holding the slot until the container is gone', holdCost(t)],
        ['sustained with pre-imports on', perSec(n(t, 'sustainedPreimportPerSec'))],
        ['idle warm container (pre-imports off)', mib(n(l, 'idleMiB'))],
        ['containers left after close', num(leaked)],
      ],
    ),
    '',
    `Cold and warm: ${n(l, 'runs')} runs each. Throughput: steady state, ${n(t, 'secondsPerWindow')}-second windows opened after ${n(t, 'warmupRuns')} runs (so the pool readied before the loop is not counted), mean of ${n(t, 'rounds')} rounds alternating sandbox, floor and floor released at the marker (runs/s per round: ${rounds(t)}); \`maxConcurrentStarts\` ${n(t, 'maxConcurrentStarts')}. ${measuredOn(results.file('sandbox').machine, 'npm run bench:sandbox')}`,
  ].join('\n');
}

function sandboxSummary(results: Results): string {
  const l = latency(results);
  const t = throughput(results);
  const h = results.row('hardening', { case: 'after-over-before' });
  return [
    `**Sandbox** (\`npm run bench:sandbox\`, runsc, \`print(1)\`): cold p50 ${ms(n(l, 'coldP50Ms'))} to the result (create+start+run),`,
    `${ms(n(l, 'coldRemovedP50Ms'))} until the container is removed; from the warm pool p50 ${ms(n(l, 'warmP50Ms'))} (${ratio(n(l, 'warmOverCold'))} cold). Sustained`,
    `${perSec(n(t, 'sustainedPerSec'))} with 4 callers, where the same containers, pipelined the same way by bare dockerode calls, reach`,
    `${perSec(n(t, 'floorPerSec'))} (${ratio(n(t, 'sustainedOverFloor'))}); holding each run's slot until its container is gone costs ${holdCost(t)} of that floor.`,
    `${mib(n(l, 'idleMiB'))} per idle warm container; ${num(n(results.row('sandbox', { case: 'leaked' }), 'leaked'))} containers leaked. The hardening (supervisor, slot held until`,
    `removal), same bench against the commit before it: cold ${ratio(n(h, 'cold'))}, warm ${ratio(n(h, 'warm'))}, sustained ${ratio(n(h, 'sustained'))} (see`,
    `[docs/sandbox.md](docs/sandbox.md#performance-2-cores-npm-run-benchsandbox)).`,
    '',
    measuredOn(results.file('sandbox').machine, 'npm run bench:sandbox'),
  ].join('\n');
}

function hardeningTable(results: Results): string {
  const before = results.row('hardening', { version: 'before' });
  const after = results.row('hardening', { version: 'after' });
  const change = results.row('hardening', { case: 'after-over-before' });
  const file = results.file('hardening');
  return [
    table(
      [
        '`print(1)`, pre-imports off',
        `before (\`${String(before.commit)}\`)`,
        'after',
        'after / before',
      ],
      [
        [
          'cold p50, to the result',
          ms(n(before, 'coldP50Ms')),
          ms(n(after, 'coldP50Ms')),
          ratio(n(change, 'cold')),
        ],
        [
          'cold p50, to the container gone',
          ms(n(before, 'coldRemovedP50Ms')),
          ms(n(after, 'coldRemovedP50Ms')),
          ratio(n(change, 'coldRemoved')),
        ],
        [
          'warm-pool hit p50',
          ms(n(before, 'warmP50Ms')),
          ms(n(after, 'warmP50Ms')),
          ratio(n(change, 'warm')),
        ],
        [
          'sustained (steady state, 4 callers)',
          perSec(n(before, 'sustainedPerSec')),
          perSec(n(after, 'sustainedPerSec')),
          ratio(n(change, 'sustained')),
        ],
        [
          'idle warm container',
          mib(n(before, 'idleMiB')),
          mib(n(after, 'idleMiB')),
          ratio(n(after, 'idleMiB') / n(before, 'idleMiB')),
        ],
      ],
    ),
    '',
    `${n(before, 'runs')} runs per version, alternating; throughput over ${(before.perRound as number[]).length} alternating rounds. ${measuredOn(file.machine, 'npm run bench:hardening')}`,
  ].join('\n');
}

function dataStackSummary(results: Results): string {
  const plain = dataStack(results, false);
  const pre = dataStack(results, true);
  return [
    `**Data stack** (\`npm run bench:sandbox\`, the same pandas + groupby + chart snippet, ${n(pre, 'runs')} runs each): cold p50`,
    `${msOrS(n(pre, 'coldP50Ms'))} (create, start, import pandas and matplotlib under gVisor, run); from a warm container that imported`,
    `them while it waited p50 ${msOrS(n(pre, 'warmP50Ms'))} (${ratio(n(pre, 'warmOverCold'))} cold); warm without pre-imports ${msOrS(n(plain, 'warmP50Ms'))}. An idle`,
    `pre-imported container holds ${mib(n(pre, 'idleMiB'))} (${mib(n(plain, 'idleMiB'))} without); the image is ${mib(n(pre, 'imageMiB'))}.`,
    '',
    measuredOn(results.file('data-stack').machine, 'npm run bench:sandbox'),
  ].join('\n');
}

function conversationTable(results: Results): string {
  const c = results.row('conversation', { bench: 'conversation' });
  const b = burst(results);
  const w = b.withoutRedis as Row;
  const nb = results.row('conversation', { bench: 'notebook-cells' });
  return [
    table(
      ['metric', 'value'],
      [
        [
          '`print(1)` as a cell of a live interpreter, p50 / p90',
          `${ms(n(c, 'cellP50Ms'))} / ${ms(n(c, 'cellP90Ms'))}`,
        ],
        [
          '`print(1)` one-shot from the warm pool (pre-imported), p50',
          ms(n(c, 'oneShotWarmP50Ms')),
        ],
        ['cell / one-shot', ratio(n(c, 'cellOverOneShot'))],
        ['filter + group-by on a live 100,000-row DataFrame, p50', ms(n(c, 'pandasCellP50Ms'))],
        [
          'first cell of a new conversation: a waiting interpreter / none waiting (start, pre-imports)',
          `${msOrS(n(c, 'firstCellMs'))} / ${msOrS(n(c, 'firstCellColdMs'))}`,
        ],
        [
          `cell after its interpreter was killed (${String(c.restoreMethod)} of ${n(c, 'restoreCells')} cells): a waiting interpreter / none waiting, medians of ${n(c, 'restoreRounds')}`,
          `${msOrS(n(c, 'restoreMs'))} / ${msOrS(n(c, 'restoreColdMs'))}`,
        ],
        ['idle interpreter holding the DataFrame', mib(n(c, 'idleMiB'))],
        [
          `${n(b, 'conversations')} users opening a conversation at once on ${n(b, 'replicas')} replicas sharing Redis, against \`maxInterpreters: ${n(b, 'maxInterpreters')}\`: most live at once / served / refused busy / failed`,
          `${n(b, 'liveMax')} / ${n(b, 'served')} / ${n(b, 'busy')} / ${n(b, 'failed')}`,
        ],
        [
          'that burst: first cell of the served, p50 / p95 (starts, pre-imports, 2 at a time per replica)',
          `${msOrS(n(b, 'firstCellP50Ms'))} / ${msOrS(n(b, 'firstCellP95Ms'))}`,
        ],
        [
          'that burst: host memory peak over its level before / containers left after close()',
          `${mib(n(b, 'hostMemoryPeakMiB'))} / ${n(b, 'leftAfterClose')}`,
        ],
        [
          'the same burst, the replicas sharing a store without Redis (each counts by itself): most live at once / served / refused busy / failed',
          `${n(w, 'liveMax')} / ${n(w, 'served')} / ${n(w, 'busy')} / ${n(w, 'failed')}`,
        ],
        [
          'notebook cells: the display machinery per cell in the kernel (split, show the value) / a cell showing `df.head()` (text and HTML), p50',
          `${num(n(nb, 'displayUsPerCell'))} µs / ${ms(n(nb, 'shownCellP50Ms'))}`,
        ],
        [
          `the cell after one interrupted at its timeout / after one killed (replay of ${n(nb, 'earlierCells')} cells), medians of ${n(nb, 'rounds')}`,
          `${ms(n(nb, 'nextAfterInterruptMs'))} / ${ms(n(nb, 'nextAfterKillMs'))} (${ratio(n(nb, 'interruptOverKill'))}; over a plain cell: ${ms(n(nb, 'interruptCostMs'))} / ${ms(n(nb, 'killCostMs'))})`,
        ],
      ],
    ),
    '',
    `${n(c, 'runs')} runs each, cells and one-shot runs alternating. ${measuredOn(results.file('conversation').machine, 'npm run bench:sandbox')}`,
    '',
    `The burst: ${measuredOn(results.file('conversation-burst').machine, 'npm run bench:sandbox -- --only conversation-burst')}`,
  ].join('\n');
}

function sizingTable(results: Results): string {
  const rows = [false, true].map(preimport => {
    const row = sizing(results, preimport);
    return [
      preimport
        ? `pre-imports on (default: ${String(row.modules).replaceAll(',', ', ')})`
        : 'pre-imports off',
      cpuSeconds(n(row, 'cpuSecondsPerStart')),
      `${num(n(row, 'containerCpuSeconds'), 2)} / ${num(n(row, 'runtimeCpuSeconds'), 2)} / ${num(n(row, 'engineCpuSeconds'), 2)}`,
      msOrS(n(row, 'startToReadyP50Ms')),
      mib(n(row, 'idleMiB')),
    ];
  });
  const bare = sizing(results, false);
  return [
    table(
      [
        'warm container',
        'CPU per start',
        'container / runtime / engine',
        'until ready',
        'idle memory',
      ],
      rows,
    ),
    '',
    `Medians of ${n(bare, 'starts')} starts each, one at a time, measured when the bootstrap waits for code (removal not included): CPU time in the container's cgroup (gVisor, the interpreter, the pre-imports), of its containerd shim and the runsc commands it ran, and of dockerd and containerd meanwhile; memory as \`docker stats\` counts it. ${measuredOn(results.file('sizing').machine, 'npm run bench:sandbox -- --only sizing')}`,
  ].join('\n');
}

function fleetFigures(results: Results): string {
  const file = results.file('fleet');
  const tls = results.row('fleet', { engine: 'tcp-tls' });
  const failover = results.row('fleet', { engines: 2 });
  return [
    '```',
    ...file.rows.map(row => JSON.stringify(row)),
    '```',
    '',
    `- **TLS vs local socket** (same engine, measured alternately): warm runs over TCP + mutual TLS took`,
    `  ${ms(n(tls, 'warmP50Ms'))} against ${ms(n(tls, 'localWarmP50Ms'))} over the unix socket (${ratio(n(tls, 'warmOverLocal'))}); the code goes over an already open`,
    `  attach connection, so the hot path makes no extra TLS round trip.`,
    `- **Failover** (4 callers in a loop, \`kill -9\` of engine 2's dockerd): the engine was taken out`,
    `  ${msOrS(n(failover, 'detectMs'))} after the kill with \`healthCheckIntervalMs: 1000\`; the first run submitted after the kill succeeded`,
    `  ${msOrS(n(failover, 'failoverMs'))} later, mostly the time to start a gVisor container on the other engine. ${num(n(failover, 'lostRuns'))} runs were lost`,
    `  (those whose code had reached engine 2), ${num(n(failover, 'duplicateRuns'))} ran twice, ${num(n(failover, 'leaked'))} containers were left on either engine.`,
    `  Restarting the killed dockerd took ${msOrS(n(failover, 'restartMs'))}; it was back in the sandbox ${msOrS(n(failover, 'readmitMs'))} later.`,
    '',
    `${(file.notes ?? []).join(' ')} ${measuredOn(file.machine, file.command)}`,
  ].join('\n');
}

function fleetSummary(results: Results): string {
  const tls = results.row('fleet', { engine: 'tcp-tls' });
  const failover = results.row('fleet', { engines: 2 });
  return [
    `**Sandbox fleet** (\`npm run bench:fleet\`, two engines, one over mutual TLS): warm runs over TLS`,
    `${ratio(n(tls, 'warmOverLocal'))} the local socket; after a \`kill -9\` of one dockerd it is taken out in ${msOrS(n(failover, 'detectMs'))},`,
    `${num(n(failover, 'lostRuns'))} in-flight runs fail with a typed error, ${num(n(failover, 'duplicateRuns'))} run twice, ${num(n(failover, 'leaked'))} containers leak. See`,
    `[docs/deploy.md](docs/deploy.md#6-figures).`,
  ].join('\n');
}

export const sandboxFigures: Renderers = {
  blocks: {
    'sandbox-table': sandboxTable,
    'sandbox-summary': sandboxSummary,
    'hardening-table': hardeningTable,
    'data-stack-summary': dataStackSummary,
    'conversation-table': conversationTable,
    'sizing-table': sizingTable,
    'fleet-figures': fleetFigures,
    'fleet-summary': fleetSummary,
  },
  values: {
    'image-size': results => mib(n(dataStack(results, true), 'imageMiB')),
    'sizing-cpu-per-start': results => cpuSeconds(n(sizing(results, false), 'cpuSecondsPerStart')),
    'sizing-cpu-per-preimport': results =>
      cpuSeconds(n(preimportCost(results), 'cpuSecondsPerPreimport')),
    'sizing-idle-bare': results => mib(n(sizing(results, false), 'idleMiB')),
    'sizing-idle-preimported': results => mib(n(sizing(results, true), 'idleMiB')),
    'display-runner-cell': results => `${n(displayRunner(results), 'runnerCellMs')} ms`,
    'display-ipython-cell': results => `${n(displayRunner(results), 'ipythonCellMs')} ms`,
    'display-ipython-import': results => ms(n(displayRunner(results), 'ipythonImportAndShellMs')),
    'burst-redis-live-max': results => num(n(burst(results), 'liveMax')),
    'burst-memory-live-max': results => num(n(burst(results).withoutRedis as Row, 'liveMax')),
  },
};
