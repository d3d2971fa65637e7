// How figures are written in the docs: one place, so a table and a sentence quoting the same
// row print the same text.
import type { MachineFacts } from './results.ts';

/** `1234.5` -> `1,235`, with `digits` decimals (0 by default). */
export function num(x: number, digits = 0): string {
  return x.toLocaleString('en-US', {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}

/** Milliseconds: `0.183 ms`, `3.8 ms`, `447 ms`, `1,232 ms`. */
export function ms(x: number): string {
  const digits = x < 1 ? 2 : x < 10 ? 1 : 0;
  return `${num(x, digits)} ms`;
}

/** Milliseconds as seconds past 10 s, else as ms: `971 ms`, `5.6 s`. */
export function msOrS(x: number): string {
  return x >= 2_000 ? `${num(x / 1000, 1)} s` : ms(x);
}

/** A ratio: `0.12x`, `1.22x`. */
export function ratio(x: number, digits = 2): string {
  return `${num(x, digits)}x`;
}

/** A share in [0, 1] as a percentage: `0.51` -> `51%`. */
export function pct(x: number, digits = 0): string {
  return `${num(x * 100, digits)}%`;
}

/** Per second: `1.2 runs/s`. */
export function perSec(x: number, unit = 'runs'): string {
  return `${num(x, x < 10 ? 1 : 0)} ${unit}/s`;
}

/** Mebibytes: `27 MiB`, `85.8 MiB`. */
export function mib(x: number): string {
  return `${num(x, x < 100 ? 1 : 0)} MiB`;
}

/** The line under a table saying where and how its figures were measured. */
export function measuredOn(machine: MachineFacts, command: string): string {
  const { loadAverage: load } = machine;
  const engine = machine.engine
    ? `, Docker ${machine.engine.docker}${machine.engine.runsc ? ` with runsc ${machine.engine.runsc}` : ''}`
    : '';
  const loadText =
    load.max - load.start < 0.5 && load.end - load.start < 0.5
      ? `load average ${num(load.start, 1)}`
      : `load average ${num(Math.min(load.start, load.end), 1)}-${num(load.max, 1)}`;
  return (
    `\`${command}\` on ${machine.date.slice(0, 10)}: ${machine.cores} cores (${machine.cpu}), ` +
    `Node ${machine.node.replace(/^v/, '')}${engine}, ${loadText}; code at \`${machine.commit}\`.`
  );
}

/** A Markdown table (prettier aligns it). */
export function table(header: string[], rows: string[][]): string {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map(row => `| ${row.join(' | ')} |`),
  ].join('\n');
}
