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

/**
 * What `file` is as seen from `dir`: the room (sub-folder) holding it, or the file itself when
 * it sits directly in `dir`; undefined when it is outside `dir`.
 */
function nodeIn(dir: string, file: string): string | undefined {
  const path = relative(dir, file);
  if (path.startsWith('..')) return undefined;
  const [head, ...rest] = path.split('/');
  return rest.length > 0 ? `${head}/` : head;
}

/** The cycles of a directed graph, each as `a -> b -> a` (depth-first, from every node). */
function cyclesOf(edges: Map<string, Set<string>>): string[] {
  const cycles = new Set<string>();
  const visit = (node: string, path: string[]) => {
    for (const next of edges.get(node) ?? []) {
      if (next === path[0]) cycles.add([...path, next].join(' -> '));
      else if (!path.includes(next) && next > path[0]!) visit(next, [...path, next]);
    }
  };
  for (const start of edges.keys()) visit(start, [start]);
  return [...cycles];
}

/** Files that nothing under src imports, yet belong: the package's entries, the CLI's, a worker's. */
const ENTRIES = [
  'index.ts',
  'internal.ts',
  'cli.ts',
  'mcp/index.ts',
  'sandbox/index.ts',
  'local-embedding/index.ts',
  'local-embedding/worker/embedding-worker.ts', // started by its path (new Worker)
];

/** Folders allowed more than {@link MAX_FILES} files, and why. */
const LARGE_FOLDERS: Record<string, string> = {
  errors: 'one file per error class, by rule',
};
const MAX_FILES = 12;

describe('source layout', () => {
  // At every level a folder's rooms (sub-folders, each taken whole) and its own files import
  // one another without a circle: a room is built on its siblings or on the files beside it,
  // never on something that is built on the room.
  it('has no import cycle between the rooms of any folder', () => {
    const graph = importGraph();
    const cycles: string[] = [];
    let edgeCount = 0;
    for (const dir of folders(src)) {
      const edges = new Map<string, Set<string>>();
      for (const [file, targets] of graph) {
        const from = nodeIn(dir, file);
        if (from === undefined) continue;
        for (const target of targets) {
          const to = nodeIn(dir, target);
          if (to === undefined || to === from) continue;
          edges.set(from, (edges.get(from) ?? new Set()).add(to));
          edgeCount++;
        }
      }
      cycles.push(...cyclesOf(edges).map(cycle => `${relative(src, dir) || 'src'}: ${cycle}`));
    }
    expect(edgeCount).toBeGreaterThan(300); // the scan did find the rooms' imports
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

  it('has no source file that nothing imports', () => {
    const graph = importGraph();
    const imported = new Set([...graph.values()].flat());
    const orphans = [...graph.keys()]
      .map(file => relative(src, file))
      .filter(file => !ENTRIES.includes(file) && !imported.has(join(src, file)));
    expect(graph.size).toBeGreaterThan(100);
    expect(orphans).toEqual([]);
  });

  it(`keeps every folder to ${MAX_FILES} files (a larger one wants rooms by concept)`, () => {
    const sizes = folders(src).map(dir => ({ dir: relative(src, dir), files: fileCount(dir) }));
    expect(sizes.length).toBeGreaterThan(20);
    const crowded = sizes.filter(({ dir, files }) => files > MAX_FILES && !(dir in LARGE_FOLDERS));
    expect(crowded).toEqual([]);
    // The exceptions are still large: an entry that no longer needs to be there goes.
    for (const dir of Object.keys(LARGE_FOLDERS))
      expect(fileCount(join(src, dir)), dir).toBeGreaterThan(MAX_FILES);
  });

  it('opens each room (a sub-folder of a capability folder) with a line saying what lives there', () => {
    const rooms = folders(src).filter(dir => relative(src, dir).split('/').length >= 2);
    expect(rooms.length).toBeGreaterThan(20);
    const missing = rooms
      .filter(dir => {
        const name = basename(dir);
        return !readdirSync(dir, { withFileTypes: true }).some(
          entry =>
            entry.isFile() &&
            readFileSync(join(dir, entry.name), 'utf8').startsWith(
              entry.name.endsWith('.py') ? `# ${name}/: ` : `// ${name}/: `,
            ),
        );
      })
      .map(dir => relative(src, dir));
    expect(missing).toEqual([]);
  });
});
