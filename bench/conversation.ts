// Conversation interpreters, measured against the one-shot path in the same run (both with the
// default pre-imports, both timed from the call to its result):
// - cellP50Ms: `print(1)` as a cell of a live interpreter (store read, inspect, attach, cell,
//   store write);
// - oneShotWarmP50Ms: `print(1)` one-shot on a pre-started, pre-imported warm container (a pool
//   hit; the pool refilled between runs, outside the timer; no measurement overlaps a refill);
// - pandasCellP50Ms: a filter + group-by on a live 100,000-row DataFrame made in an earlier cell;
// - firstCellMs: the first cell (`print(1)`) of a new conversation, taking a waiting
//   interpreter; firstCellColdMs: the same cell as the first conversation's, which starts one
//   (pre-imports too);
// - restoreMs: the cell after its interpreter was killed (docker kill), end to end: a waiting
//   interpreter takes over, the conversation's 4 kept cells re-run (the DataFrame rebuilt), then
//   the cell; restoreColdMs: the same after every interpreter was killed (an engine restart), so
//   a new one starts first; medians of `restores` rounds each;
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
// Longest wait for the pool to have an interpreter or container ready: past it the bench fails
// instead of hanging (a start-up that keeps failing never fills the pool).
const POOL_WAIT_MS = 180_000;

/** Polls `ready` until it holds; throws after `POOL_WAIT_MS`. */
async function waitUntil(ready: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + POOL_WAIT_MS;
  while (!ready()) {
    if (performance.now() > deadline)
      throw new Error(`bench: no ${what} after ${POOL_WAIT_MS / 1000} s`);
    await new Promise(resolve => setTimeout(resolve, 20));
  }
}

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

  // The first conversation of a process starts its interpreter (the pool fills on first use);
  // later ones take a waiting one.
  // Both time the same cell, so they differ only by the interpreter's start.
  const [firstCellColdMs, first] = await timed(() => cell('print(1)'));
  ok(first);
  ok(await cell(SETUP[0]!));
  await waitUntil(() => sandbox.warmInterpreterCount >= 1, 'waiting interpreter');
  const [firstCellMs, second] = await timed(() =>
    sandbox.executeCell('print(1)', { conversation: { id: 'bench-2', userId: 'bench-user' } }),
  );
  ok(second);
  for (const code of SETUP.slice(1)) ok(await cell(code));
  const cells: number[] = [];
  const pandas: number[] = [];
  const oneShot: number[] = [];
  // After each one-shot run its container is removed and the pool refills in the background (a
  // gVisor teardown, a container start and its pre-imports: seconds of CPU); every measurement
  // waits for both, so none pays for another's.
  const poolReady = async () => {
    await sandbox.waitForCleanup();
    await waitUntil(() => sandbox.warmReadyCount >= 1, 'warm container');
  };
  for (let i = 0; i < runs; i++) {
    // Alternating, so a drifting machine load hits both paths alike.
    await poolReady();
    const [cellMs, result] = await timed(() => cell('print(1)'));
    ok(result);
    cells.push(cellMs);
    await poolReady();
    const [pandasMs, grouped] = await timed(() => cell(PANDAS_CELL));
    ok(grouped);
    pandas.push(pandasMs);
    await poolReady();
    const [oneShotMs, run] = await timed(() => sandbox.execute('print(1)'));
    ok(run);
    oneShot.push(oneShotMs);
  }
  const idle = await idleMiB(docker, { kind: 'conversation' });

  // Restores: a conversation of exactly the setup cells loses its interpreter, then runs a cell
  // (which first re-runs the 3 setup cells). Warm: only its interpreter was killed (a timeout,
  // out of memory, an eviction), so a waiting one takes over; cold: every interpreter was killed
  // (an engine restart), so one is started.
  const restore = async (round: string, { all }: { all: boolean }) => {
    const restored = { id: `bench-restore-${round}`, userId: 'bench-user' };
    for (const code of SETUP) ok(await sandbox.executeCell(code, { conversation: restored }));
    const host = await sandbox.executeCell('import socket\nprint(socket.gethostname())', {
      conversation: restored,
    });
    await waitUntil(() => sandbox.warmInterpreterCount >= 1, 'waiting interpreter');
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
    const victims = all ? live : live.filter(info => info.Id.startsWith(host.stdout.trim()));
    await Promise.all(victims.map(info => docker.getContainer(info.Id).kill()));
    const [ms, result] = await timed(() =>
      sandbox.executeCell('print(len(df))', { conversation: restored, timeoutMs: 60_000 }),
    );
    ok(result);
    if (result.restored?.cells !== SETUP.length + 1) {
      throw new Error(`restore did not replay the setup: ${JSON.stringify(result.restored)}`);
    }
    return ms;
  };
  const restoreTimes: number[] = [];
  const coldRestoreTimes: number[] = [];
  for (let i = 0; i < restores; i++) {
    restoreTimes.push(await restore(`warm-${i}`, { all: false }));
    coldRestoreTimes.push(await restore(`cold-${i}`, { all: true }));
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
    firstCellColdMs: round(firstCellColdMs),
    restoreMs: round(percentile(restoreTimes, 0.5)),
    restoreColdMs: round(percentile(coldRestoreTimes, 0.5)),
    restoreRounds: restores,
    restoreCells: SETUP.length + 1,
    restoreMethod: 'replay',
    idleMiB: round(idle),
  };
}
