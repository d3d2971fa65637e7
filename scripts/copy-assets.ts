// Copies the files tsc does not (it copies only TypeScript) next to the compiled modules in
// dist/: the in-container Python programs (src/**/*.py, read by `pythonSource`) and the ONNX
// graphs and the model licences a local model ships with (src/**/*.onnx,
// src/local-embedding/fetch/*-LICENSE.txt; `fetchModel` copies them into a model folder).
import { cpSync, globSync, mkdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
for (const file of globSync(
  ['src/**/*.py', 'src/**/*.onnx', 'src/local-embedding/fetch/*-LICENSE.txt'],
  { cwd: root },
)) {
  const target = join(root, 'dist', relative('src', file));
  mkdirSync(dirname(target), { recursive: true });
  cpSync(join(root, file), target);
}
