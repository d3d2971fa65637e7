// Copies the in-container Python programs (src/**/*.py) next to the compiled modules in dist/,
// where `pythonSource` reads them; tsc copies only TypeScript.
import { cpSync, globSync, mkdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
for (const file of globSync('src/**/*.py', { cwd: root })) {
  const target = join(root, 'dist', relative('src', file));
  mkdirSync(dirname(target), { recursive: true });
  cpSync(join(root, file), target);
}
