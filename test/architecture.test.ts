import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { expect, it } from 'vitest';

const src = join(import.meta.dirname, '..', 'src');

/** Every .ts file under src, recursively. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** The capability folder of a file under src (`sandbox` for src/sandbox/session/x.ts). */
const folderOf = (file: string) => relative(src, file).split('/')[0]!.replace(/\.ts$/, '');

it('has no import cycle between capability folders', () => {
  const edges = new Map<string, Set<string>>();
  for (const file of sources(src)) {
    const from = folderOf(file);
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
      const to = folderOf(resolve(dirname(file), specifier!));
      if (to !== from) edges.set(from, (edges.get(from) ?? new Set()).add(to));
    }
  }
  expect(edges.size).toBeGreaterThan(3); // the scan did find the folders' imports
  // Depth-first search for a path back to where it started.
  const cycles: string[] = [];
  const visit = (node: string, path: string[]) => {
    for (const next of edges.get(node) ?? []) {
      if (next === path[0]) cycles.push([...path, next].join(' -> '));
      else if (!path.includes(next)) visit(next, [...path, next]);
    }
  };
  for (const start of edges.keys()) visit(start, [start]);
  expect(cycles).toEqual([]);
});
