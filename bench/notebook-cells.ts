// Notebook cells (issue 35), in one run on one engine:
// - displayUsPerCell: what the display machinery costs a cell inside the interpreter (gVisor):
//   the same 6 cell sources run `iterations` times each through the kernel's notebook runner
//   (parse, split off the last expression, show its value as a MIME bundle) and through the
//   script runner it replaced (`exec` of the whole cell), timed in the kernel, the difference
//   per cell in microseconds (showing the value's bundle included, sending it to the host not);
// - cellP50Ms / shownCellP50Ms: end to end, `print(len(df))` (nothing shown) and `df.head()`
//   (text and HTML sent to the host and checked there) as cells of a live interpreter;
// - nextAfterInterruptMs: a conversation of 5 earlier cells runs a cell that passes its 1 s
//   limit and stops on its KeyboardInterrupt; the next cell (`print(1)`) then runs in the same
//   interpreter; nextAfterKillMs: the same with a cell that ignores the interrupt, so its
//   interpreter is killed and the next cell first restores the 5 cells in a new one (a waiting
//   interpreter takes over); medians of `rounds` rounds each; interruptOverKill = their ratio;
//   interruptCostMs / killCostMs: what each adds to that next cell over cellP50Ms (the same
//   cell in a live interpreter), and interruptCostOverKillCost their ratio.
import type Docker from 'dockerode';
import { DockerSandbox } from '../src/sandbox/index.ts';

const percentile = (xs: number[], p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
};
const round = (x: number): number => Math.round(x * 10) / 10;

/** Earlier cells of the conversations that are interrupted or killed. */
const EARLIER = [
  'import numpy as np, pandas as pd',
  'rng = np.random.default_rng(7)',
  'df = pd.DataFrame({"region": rng.choice(["n", "s"], 10_000), "amount": rng.random(10_000)})',
  'totals = df.groupby("region").amount.sum()',
  'top = df.nlargest(5, "amount")',
];

/** Times the kernel's two runners on the same sources, inside the interpreter (prints JSON). */
const IN_KERNEL = (iterations: number) => `
import json, sys, time, io, contextlib
display = sys.modules["ai_toolbelt_display"]
artifacts = sys.modules["ai_toolbelt_artifacts"]
sources = ["x = 1", "x + 1", "y = [i for i in range(50)]\\nlen(y)", "print('a')", "z = {'a': 1}\\nz", "x;"]
ns = {"__builtins__": __builtins__}
shown = []
def show(value, main):
    shown.append(display.mime_bundle(value, 20000))
def timed(run):
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        for _ in range(${iterations}):
            for source in sources:
                run(source)
    return (time.perf_counter() - start) / (${iterations} * len(sources))
script = timed(lambda source: artifacts.run_code(source, ns, "<bench>"))
notebook = timed(lambda source: display.run_cell(source, ns, "<bench>", show, lambda flag: None))
print(json.dumps({"scriptUs": script * 1e6, "notebookUs": notebook * 1e6}))
`;

/** One JSON row: the display machinery's cost, and interrupting against killing and replaying. */
export async function benchNotebookCells({
  docker,
  image,
  runs,
  rounds = 3,
  iterations = 200,
}: {
  /** Docker client. */
  docker: Docker;
  /** The sandbox image. */
  image: string;
  /** Timed cells per end-to-end case. */
  runs: number;
  /** Interrupt and kill rounds. */
  rounds?: number;
  /** Repetitions of each source in the in-kernel timing. */
  iterations?: number;
}): Promise<Record<string, unknown>> {
  await using sandbox = await DockerSandbox.create({ docker, image, warmPoolSize: 0 });
  const ok = <T extends { status: string; stderr: string }>(result: T): T => {
    if (result.status !== 'success') throw new Error(`bench cell failed: ${result.stderr}`);
    return result;
  };
  const timed = async <T>(work: () => Promise<T>): Promise<[number, T]> => {
    const startedAt = performance.now();
    const result = await work();
    return [performance.now() - startedAt, result];
  };
  const conversation = { id: 'notebook', userId: 'bench-user' };
  const cell = (code: string) => sandbox.executeCell(code, { conversation, timeoutMs: 60_000 });
  for (const code of EARLIER) ok(await cell(code));
  const inKernel = JSON.parse(ok(await cell(IN_KERNEL(iterations))).stdout) as {
    scriptUs: number;
    notebookUs: number;
  };
  const plain: number[] = [];
  const shown: number[] = [];
  for (let i = 0; i < runs; i++) {
    // Alternating, so a drifting machine load hits both alike.
    const [plainMs] = await timed(async () => ok(await cell('print(len(df))')));
    plain.push(plainMs);
    const [shownMs, result] = await timed(async () => ok(await cell('df.head()')));
    if (result.results?.[0]?.data['text/html'] === undefined) throw new Error('no table shown');
    shown.push(shownMs);
  }

  const afterStop = async (round: string, code: string) => {
    const stopped = { id: `notebook-${round}`, userId: 'bench-user' };
    for (const earlier of EARLIER)
      ok(await sandbox.executeCell(earlier, { conversation: stopped }));
    const stuck = await sandbox.executeCell(code, { conversation: stopped, timeoutMs: 1_000 });
    if (stuck.status !== 'timeout') throw new Error(`expected a timeout: ${stuck.status}`);
    const [ms, next] = await timed(() =>
      sandbox.executeCell('print(len(df))', { conversation: stopped, timeoutMs: 60_000 }),
    );
    ok(next);
    return { ms, interrupted: stuck.interrupted === true, restored: next.restored?.cells };
  };
  const interrupted: number[] = [];
  const killed: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const soft = await afterStop(`soft-${i}`, 'while True:\n    pass');
    if (!soft.interrupted || soft.restored !== undefined) throw new Error('not interrupted');
    interrupted.push(soft.ms);
    const hard = await afterStop(
      `hard-${i}`,
      'import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass',
    );
    if (hard.restored !== EARLIER.length) throw new Error(`no replay: ${hard.restored}`);
    killed.push(hard.ms);
  }
  const interruptMs = percentile(interrupted, 0.5);
  const killMs = percentile(killed, 0.5);
  const cellMs = percentile(plain, 0.5);
  const interruptCost = Math.max(0, interruptMs - cellMs);
  const killCost = Math.max(1, killMs - cellMs);
  return {
    bench: 'notebook-cells',
    runs,
    displayUsPerCell: round(inKernel.notebookUs - inKernel.scriptUs),
    scriptRunnerUs: round(inKernel.scriptUs),
    notebookRunnerUs: round(inKernel.notebookUs),
    cellP50Ms: round(cellMs),
    shownCellP50Ms: round(percentile(shown, 0.5)),
    rounds,
    earlierCells: EARLIER.length,
    nextAfterInterruptMs: round(interruptMs),
    nextAfterKillMs: round(killMs),
    interruptOverKill: Math.round((interruptMs / killMs) * 1000) / 1000,
    interruptCostMs: round(interruptCost),
    killCostMs: round(killCost),
    interruptCostOverKillCost: Math.round((interruptCost / killCost) * 1000) / 1000,
  };
}
