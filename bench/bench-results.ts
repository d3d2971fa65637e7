// Every bench prints one JSON line per measurement and writes the same lines, with the machine
// facts, to bench/results/NAME.json. README and docs figures are generated from those files
// (`node scripts/figures.ts`; `npm test` checks the docs match them), so a published figure is
// always one a bench printed. BENCH_NO_SAVE=1 prints without writing (trial runs).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { format, resolveConfig } from 'prettier';
import { type MachineFacts, watchMachine } from './machine-facts.ts';

/** Where results files live. */
export const RESULTS_DIR = join(import.meta.dirname, 'results');

/** One results file. */
export type ResultsFile = {
  /** The file's name without `.json`. */
  name: string;
  /** The command that regenerates it. */
  command: string;
  /** Non-default arguments it ran with (empty: the defaults). */
  args: string[];
  machine: MachineFacts;
  /** What the bench says about how it measured (one line per point), shown beside its figures. */
  notes?: string[];
  rows: Record<string, unknown>[];
};

/**
 * Collects a bench's rows: `row()` prints one JSON line and keeps it; `save()` writes the file.
 *
 * @example
 * ```ts
 * const results = benchResults({ name: 'mcp', command: 'npm run bench:mcp' });
 * results.row({ transport: 'stdio', discoverMs: 447 });
 * await results.save();
 * ```
 */
export function benchResults({
  name,
  command,
  docker,
  args = process.argv.slice(2),
  notes,
}: {
  /** File name under bench/results, without `.json`. */
  name: string;
  /** The npm script that runs the bench. */
  command: string;
  /** The Docker engine used, for the machine facts. */
  docker?: Docker;
  /** Arguments given (recorded, so a file measured with other settings says so). */
  args?: string[];
  /** How the bench measured, for readers of the file. */
  notes?: string[];
}): {
  row(row: Record<string, unknown>): void;
  save(): Promise<string | undefined>;
} {
  const machine = watchMachine(docker ? { docker } : {});
  const rows: Record<string, unknown>[] = [];
  return {
    row(row) {
      console.log(JSON.stringify(row));
      rows.push(row);
    },
    async save() {
      if (process.env.BENCH_NO_SAVE === '1') return undefined;
      const file: ResultsFile = {
        name,
        command,
        args,
        machine: await machine.facts(),
        ...(notes ? { notes } : {}),
        rows,
      };
      const path = join(RESULTS_DIR, `${name}.json`);
      const config = (await resolveConfig(path)) ?? {};
      await mkdir(RESULTS_DIR, { recursive: true });
      await writeFile(path, await format(JSON.stringify(file), { ...config, filepath: path }));
      return path;
    },
  };
}
