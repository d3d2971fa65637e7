import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type DocBlock, withPrelude } from './doc-blocks.ts';

const run = promisify(execFile);

/** What `tsc` said about a set of doc blocks. */
export type TypeCheck = {
  /** tsc's exit status: anything but 0 fails, whatever its output says. */
  exitCode: number;
  /** Each error, as `file.md:line: message` for a block's, as tsc printed it otherwise. */
  problems: string[];
};

/**
 * Type-checks `blocks` as a reader copies them (each block a module, with the imports and
 * declarations `withPrelude` gives it) against the built package, with `tsc` in `dir`. The
 * compiler's exit status decides: a failure with no error line of a block (a global error, one in
 * a shared declaration file, a crash) is a problem too, reported with tsc's own output.
 *
 * @example
 * ```ts
 * const { exitCode, problems } = await typeCheckBlocks({ root, dir, blocks, modules });
 * ```
 */
export async function typeCheckBlocks({
  root,
  dir,
  blocks,
  modules,
  compilerOptions = {},
}: {
  /** The repository root (its node_modules and built package). */
  root: string;
  /** Scratch directory, emptied first. */
  dir: string;
  blocks: readonly DocBlock[];
  /** Export names per module, for the preludes. */
  modules: Record<string, readonly string[]>;
  /** Extra compiler options (tests of this check). */
  compilerOptions?: Record<string, unknown>;
}): Promise<TypeCheck> {
  const fileOf = (i: number) => `block-${String(i).padStart(3, '0')}.ts`;
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const texts = blocks.map(block => withPrelude(block.code, modules));
  // The line of each module where its block's code starts (after the prelude).
  const codeStarts = texts.map(
    (text, i) => text.split('\n').length - blocks[i]!.code.split('\n').length - 2,
  );
  await Promise.all(texts.map((text, i) => writeFile(join(dir, fileOf(i)), text)));
  // Next.js apps import their own modules through the `@/` alias.
  await writeFile(
    join(dir, 'app-modules.d.ts'),
    "declare module '@/lib/mcp' {\n  export function getToolbox(): Promise<import('ai-toolbelt/mcp').McpToolbox>;\n}\n",
  );
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2023',
        lib: ['ES2023', 'ESNext.Disposable', 'DOM'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: true,
        noEmit: true,
        types: ['node'],
        typeRoots: [join(root, 'node_modules', '@types')],
        ...compilerOptions,
      },
      include: ['*.ts'],
    }),
  );
  const tsc = join(root, 'node_modules', '.bin', 'tsc');
  const { exitCode, output } = await run(tsc, ['-p', dir, '--pretty', 'false']).then(
    ({ stdout, stderr }) => ({ exitCode: 0, output: stdout + stderr }),
    (error: { code?: unknown; stdout?: string; stderr?: string }) => ({
      exitCode: typeof error.code === 'number' ? error.code : 1,
      output: `${error.stdout ?? ''}${error.stderr ?? ''}`,
    }),
  );
  const problems = output
    .split('\n')
    .filter(line => line.trim() !== '' && !/^\s/.test(line))
    .map(line => {
      const block = /(?:^|[\\/])block-(\d+)\.ts\((\d+),\d+\): /.exec(line);
      if (block === null) return line;
      const i = Number(block[1]);
      const { file, line: first } = blocks[i]!;
      const at = Math.max(first, first + Number(block[2]) - 1 - codeStarts[i]!);
      return `${file}:${at}: ${line.slice(block.index + block[0].length)}`;
    });
  if (exitCode !== 0 && problems.length === 0)
    problems.push(`tsc exited ${exitCode} without naming an error: ${output}`);
  return { exitCode, problems };
}
