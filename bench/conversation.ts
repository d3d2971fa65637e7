// Conversation interpreters, measured against the one-shot path in the same run (both with the
// default pre-imports, both timed from the call to its result):
// - cellP50Ms: `print(1)` as a cell of a live interpreter (store read, inspect, attach, cell,
//   store write);
// - oneShotWarmP50Ms: `print(1)` one-shot on a pre-started, pre-imported warm container (a pool
//   hit; the pool refilled between runs, outside the timer);
// - pandasCellP50Ms: a filter + group-by on a live 100,000-row DataFrame made in an earlier cell;
// - firstCellMs: the first cell of a new conversation (interpreter start with pre-imports);
// - restoreMs: the cell after its interpreter was killed (docker kill), end to end: a new
//   interpreter with pre-imports, the conversation's 3 kept cells re-run (the DataFrame rebuilt),
//   then the cell; median of `restores` rounds;
// - idleMiB: one idle interpreter holding the DataFrame, as docker stats counts it.
import type Docker from 'dockerode';
import { DockerSandbox } from '../src/sandbox/index.ts';
import { idleMiB } from './idle-memory.ts';

const percentile = (xs: number[], p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
};
const round = (x: number): number => Math.round(x * 10) / 10;

const SETUP = [
  'import numpy as np, pandas as pd',
  'rng = np.random.default_rng(7)\ndf = pd.DataFrame({"region": rng.choice(["n", "s", "e", "w"], 100_000), "amount": rng.random(100_000)})',
  'df["month"] = np.arange(len(df)) % 12',
];
const PANDAS_CELL =
  'top = df[df.amount > df.amount.median()]\nprint(top.groupby(["region", "month"]).amount.sum().round(2).head(3))';

/** One JSON row: cells on a live interpreter against warm one-shot runs, restore after loss. */
export async function benchConversation({
  docker,
  image,
  runs,
  restores,
}: {
  /** Docker client. */
  docker: Docker;
  /** The sandbox image. */
  image: string;
  /** Timed runs per case. */
  runs: number;
  /** Restore rounds. */
  restores: number;
}): Promise<object> {
  await using sandbox = await DockerSandbox.create({ docker, image, warmPoolSize: 1 });
  const timed = async <T>(work: () => Promise<T>): Promise<[number, T]> => {
    const startedAt = performance.now();
    const result = await work();
    return [performance.now() - startedAt, result];
  };
  const ok = (result: { status: string; stderr: string }) => {
    if (result.status !== 'success') throw new Error(`bench cell failed: ${result.stderr}`);
  };
  const conversation = { id: 'bench', userId: 'bench-user' };
  const cell = (code: string) => sandbox.executeCell(code, { conversation, timeoutMs: 60_000 });

  const [firstCellMs, first] = await timed(() => cell(SETUP[0]!));
  ok(first);
  for (const code of SETUP.slice(1)) ok(await cell(code));
  const cells: number[] = [];
  const pandas: number[] = [];
  const oneShot: number[] = [];
  for (let i = 0; i < runs; i++) {
    // Alternating, so a drifting machine load hits both paths alike.
    const [cellMs, result] = await timed(() => cell('print(1)'));
    ok(result);
    cells.push(cellMs);
    const [pandasMs, grouped] = await timed(() => cell(PANDAS_CELL));
    ok(grouped);
    pandas.push(pandasMs);
    while (sandbox.warmReadyCount < 1) await new Promise(resolve => setTimeout(resolve, 20));
    const [oneShotMs, run] = await timed(() => sandbox.execute('print(1)'));
    ok(run);
    oneShot.push(oneShotMs);
  }
  const idle = await idleMiB(docker, { kind: 'conversation' });

  const restoreTimes: number[] = [];
  for (let i = 0; i < restores; i++) {
    // A conversation of exactly the setup cells, so each restore re-runs the same 3 cells.
    const restored = { id: `bench-restore-${i}`, userId: 'bench-user' };
    for (const code of SETUP) ok(await sandbox.executeCell(code, { conversation: restored }));
    // This sandbox's interpreters only: others on the engine belong to other processes.
    const live = await docker.listContainers({
      filters: {
        label: [
          'ai-toolbelt.sandbox.kind=conversation',
          `ai-toolbelt.sandbox.instance=${sandbox.instanceId}`,
        ],
        status: ['running'],
      },
    });
    await Promise.all(live.map(info => docker.getContainer(info.Id).kill()));
    const [ms, result] = await timed(() =>
      sandbox.executeCell('print(len(df))', { conversation: restored, timeoutMs: 60_000 }),
    );
    ok(result);
    if (result.restored?.cells !== SETUP.length) {
      throw new Error(`restore did not replay the setup: ${JSON.stringify(result.restored)}`);
    }
    restoreTimes.push(ms);
  }
  const cellP50 = percentile(cells, 0.5);
  const oneShotP50 = percentile(oneShot, 0.5);
  return {
    bench: 'conversation',
    runs,
    cellP50Ms: round(cellP50),
    cellP90Ms: round(percentile(cells, 0.9)),
    oneShotWarmP50Ms: round(oneShotP50),
    cellOverOneShot: Math.round((cellP50 / oneShotP50) * 1000) / 1000,
    pandasCellP50Ms: round(percentile(pandas, 0.5)),
    firstCellMs: round(firstCellMs),
    restoreMs: round(percentile(restoreTimes, 0.5)),
    restoreRounds: restores,
    restoreMethod: 'replay',
    idleMiB: round(idle),
  };
}
