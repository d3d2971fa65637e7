import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ResultsFile } from '../../bench/bench-results.ts';

export type { ResultsFile } from '../../bench/bench-results.ts';
export type { MachineFacts } from '../../bench/machine-facts.ts';

/** A results row: what one JSON line of a bench held. */
export type Row = Record<string, unknown>;

/**
 * The committed results files (bench/results/*.json), with look-ups that fail loudly: a figure
 * the docs need and no bench printed is an error naming the file, the row and the field.
 *
 * @example
 * ```ts
 * const results = loadResults(join(root, 'bench', 'results'));
 * results.number('mcp', { transport: 'stdio' }, 'discoverMs'); // 447
 * ```
 */
export class Results {
  private readonly files: Map<string, ResultsFile>;

  constructor(files: Iterable<ResultsFile>) {
    this.files = new Map([...files].map(file => [file.name, file]));
  }

  /** Names of the files loaded. */
  names(): string[] {
    return [...this.files.keys()].sort();
  }

  /** A whole results file. */
  file(name: string): ResultsFile {
    const file = this.files.get(name);
    if (file === undefined) {
      throw new Error(
        `bench/results/${name}.json is missing: run the bench that writes it (see bench/bench-results.ts)`,
      );
    }
    return file;
  }

  /** Every row of `name` whose fields equal those of `match`. */
  rows(name: string, match: Row = {}): Row[] {
    return this.file(name).rows.filter(row =>
      Object.entries(match).every(([key, value]) => row[key] === value),
    );
  }

  /** The one row of `name` matching `match`. */
  row(name: string, match: Row = {}): Row {
    const rows = this.rows(name, match);
    if (rows.length !== 1) {
      throw new Error(
        `bench/results/${name}.json: expected one row matching ${JSON.stringify(match)}, found ${rows.length}`,
      );
    }
    return rows[0]!;
  }

  /** A numeric field of the one row matching `match`. */
  number(name: string, match: Row, field: string): number {
    const value = this.row(name, match)[field];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new Error(
        `bench/results/${name}.json: ${field} of the row ${JSON.stringify(match)} is ${JSON.stringify(value)}, not a number`,
      );
    }
    return value;
  }
}

/** Reads every `*.json` of `dir`. */
export function loadResults(dir: string): Results {
  const names = readdirSync(dir).filter(name => name.endsWith('.json'));
  return new Results(
    names.map(name => {
      const file = JSON.parse(readFileSync(join(dir, name), 'utf8')) as ResultsFile;
      if (file.name !== name.replace(/\.json$/, '')) {
        throw new Error(
          `bench/results/${name}: its "name" field says ${JSON.stringify(file.name)}`,
        );
      }
      return file;
    }),
  );
}
