import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const src = join(import.meta.dirname, '..', 'src');

/** Every .ts file under `dir`, recursively. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** Every folder under `dir` (itself included), recursively. */
function folders(dir: string): string[] {
  return [
    dir,
    ...readdirSync(dir, { withFileTypes: true })
      .filter(entry => entry.isDirectory())
      .flatMap(entry => folders(join(dir, entry.name))),
  ];
}

/**
 * The files each file under src imports, resolved: `import`, `import type`, `export … from`,
 * side-effect and dynamic imports alike (a type-only circle still ties two files together).
 */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(src)) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)'(\.[^']+)'/g)];
    graph.set(
      file,
      targets.map(([, specifier]) => resolve(dirname(file), specifier!)),
    );
  }
  return graph;
}

/** How many files (not sub-folders) `dir` holds. */
const fileCount = (dir: string) =>
  readdirSync(dir, { withFileTypes: true }).filter(entry => entry.isFile()).length;

/** The capability folder of a file under src (`sandbox` for src/sandbox/session/x.ts). */
const folderOf = (file: string) => relative(src, file).split('/')[0]!.replace(/\.ts$/, '');

/** Folders allowed more than {@link MAX_FILES} files, and why. */
const LARGE_FOLDERS: Record<string, string> = {
  errors: 'one file per error class, by rule',
  sandbox: 'not split by concept yet (issue 24 split mcp/)',
  retrieval: 'not split by concept yet (issue 24 split mcp/)',
  middleware: 'not split by concept yet (issue 24 split mcp/)',
};
const MAX_FILES = 12;

describe('source layout', () => {
  it('has no import cycle between capability folders', () => {
    const edges = new Map<string, Set<string>>();
    for (const [file, targets] of importGraph()) {
      const from = folderOf(file);
      for (const target of targets) {
        const to = folderOf(target);
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

  it('has no import cycle between files', () => {
    const graph = importGraph();
    const edgeCount = [...graph.values()].reduce((sum, targets) => sum + targets.length, 0);
    expect(edgeCount).toBeGreaterThan(300); // the scan did find the files' imports
    // Tarjan's strongly connected components: every component of more than one file (or a
    // file importing itself) is a circle.
    const order = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const circles: string[] = [];
    const visit = (file: string) => {
      order.set(file, order.size);
      low.set(file, order.get(file)!);
      stack.push(file);
      for (const target of graph.get(file)!) {
        if (!graph.has(target)) continue; // a package or a non-source file
        if (!order.has(target)) {
          visit(target);
          low.set(file, Math.min(low.get(file)!, low.get(target)!));
        } else if (stack.includes(target)) {
          low.set(file, Math.min(low.get(file)!, order.get(target)!));
        }
      }
      if (low.get(file) !== order.get(file)) return;
      const component = stack.splice(stack.indexOf(file));
      if (component.length > 1 || graph.get(file)!.includes(file))
        circles.push(component.map(f => relative(src, f)).join(' <-> '));
    };
    for (const file of graph.keys()) if (!order.has(file)) visit(file);
    expect(circles).toEqual([]);
  });

  it(`keeps folders to ${MAX_FILES} files (a larger one wants sub-folders by concept)`, () => {
    const sizes = folders(src).map(dir => ({ dir: relative(src, dir), files: fileCount(dir) }));
    expect(sizes.length).toBeGreaterThan(10);
    const crowded = sizes.filter(({ dir, files }) => files > MAX_FILES && !(dir in LARGE_FOLDERS));
    expect(crowded).toEqual([]);
    // The exceptions are still large: an entry that no longer needs to be there goes.
    for (const dir of Object.keys(LARGE_FOLDERS))
      expect(fileCount(join(src, dir)), dir).toBeGreaterThan(MAX_FILES);
  });

  it('opens each src/mcp sub-folder with a line saying what it is for', () => {
    const subFolders = folders(join(src, 'mcp')).slice(1);
    expect(subFolders.length).toBeGreaterThan(4);
    const missing = subFolders.filter(dir => {
      const name = basename(dir);
      return !readdirSync(dir).some(file =>
        readFileSync(join(dir, file), 'utf8').startsWith(`// ${name}/: `),
      );
    });
    expect(missing).toEqual([]);
  });
});
