// The data-stack part of bench:sandbox: one realistic snippet (import pandas and matplotlib,
// a groupby, one chart) under gVisor, timed from `execute` to its result:
// - cold: no warm pool, so each run creates and starts a container and imports everything;
// - warm, preimport false: a started container waiting for code, imports paid by the code;
// - warm, preimport true: a started container that already imported numpy, pandas and
//   matplotlib.pyplot while it waited.
// All three in one run, on one machine. Also the memory of an idle warm container either way
// and the image's size. Prints one JSON line per pre-import setting.
import type Docker from 'dockerode';
import { DockerSandbox } from '../src/sandbox/index.ts';
import { idleMiB } from './idle-memory.ts';

const SNIPPET = [
  'import pandas as pd',
  'import matplotlib.pyplot as plt',
  'df = pd.DataFrame({"region": ["north", "south", "east", "west"] * 250, "amount": range(1000)})',
  'totals = df.groupby("region")["amount"].sum()',
  'totals.plot.bar(title="Sales by region")',
  'print(totals.to_string())',
].join('\n');

const percentile = (xs: number[], p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
};
const round = (x: number): number => Math.round(x * 10) / 10;

async function timeRun(sandbox: DockerSandbox): Promise<number> {
  const started = performance.now();
  const result = await sandbox.execute(SNIPPET, { timeoutMs: 120_000 });
  const ms = performance.now() - started;
  if (
    result.status !== 'success' ||
    result.images.length !== 1 ||
    !result.stdout.includes('north')
  ) {
    throw new Error(
      `unexpected result: ${JSON.stringify({ ...result, images: result.images.length })}`,
    );
  }
  return ms;
}

async function untilReady(sandbox: DockerSandbox): Promise<void> {
  await sandbox.waitForCleanup();
  while (sandbox.warmReadyCount < 1) await new Promise(resolve => setTimeout(resolve, 20));
}

/**
 * Runs the three cases and returns the JSON lines.
 *
 * @example
 * ```ts
 * for (const line of await benchDataStack({ docker, image, runs: 8 })) console.log(JSON.stringify(line));
 * ```
 */
export async function benchDataStack({
  docker,
  image,
  runs,
}: {
  /** Docker client. */
  docker: Docker;
  /** The sandbox image. */
  image: string;
  /** Timed runs per case (after one untimed run). */
  runs: number;
}): Promise<object[]> {
  const cold: number[] = [];
  {
    await using sandbox = await DockerSandbox.create({ docker, image, warmPoolSize: 0 });
    await timeRun(sandbox); // the first start pays the page cache
    for (let i = 0; i < runs; i++) {
      await sandbox.waitForCleanup();
      cold.push(await timeRun(sandbox));
    }
  }
  const warm = async (preimport: boolean) => {
    await using sandbox = await DockerSandbox.create({
      docker,
      image,
      warmPoolSize: 1,
      ...(preimport ? {} : { preimport: [] }),
    });
    const times: number[] = [];
    await untilReady(sandbox);
    await timeRun(sandbox);
    for (let i = 0; i < runs; i++) {
      await untilReady(sandbox);
      times.push(await timeRun(sandbox));
    }
    await untilReady(sandbox);
    return { times, idleMiB: await idleMiB(docker) };
  };
  const plain = await warm(false);
  const preimported = await warm(true);
  const imageBytes = (await docker.getImage(image).inspect()).Size;
  const coldP50 = percentile(cold, 0.5);
  return [plain, preimported].map((run, i) => ({
    bench: 'sandbox',
    snippet: 'pandas+chart',
    preimport: i === 1,
    runs,
    coldP50Ms: round(coldP50),
    warmP50Ms: round(percentile(run.times, 0.5)),
    warmP90Ms: round(percentile(run.times, 0.9)),
    warmOverCold: Math.round((percentile(run.times, 0.5) / coldP50) * 1000) / 1000,
    idleMiB: round(run.idleMiB),
    imageMiB: round(imageBytes / (1024 * 1024)),
  }));
}
