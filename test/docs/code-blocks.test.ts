import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { type DocBlock, docBlocks, withPrelude } from './doc-blocks.ts';

// README and docs code, checked as a reader copies it: every ```ts block type-checks against the
// built package (`npm test` builds first), and blocks marked `<!-- doc-test: run -->` run
// offline and print what their `// ` comments after each console.log say (`...` matches anything).
const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const dir = join(root, 'test-results', 'doc-blocks');
const blocks = docBlocks(root, [
  'README.md',
  'docs/mcp.md',
  'docs/sandbox.md',
  'docs/deploy.md',
  'examples/hono-server/README.md',
  'examples/next-app/README.md',
]);
const fileOf = (i: number) => `block-${String(i).padStart(3, '0')}.ts`;
const where = (block: DocBlock) => `${block.file}:${block.line}`;

async function exportsOf(specifier: string): Promise<string[]> {
  return Object.keys(await import(specifier));
}

describe('README and docs code', () => {
  it('found the blocks', () => {
    expect(blocks.length).toBeGreaterThan(20);
    expect(blocks.some(block => block.run)).toBe(true);
  });

  it('type-checks every TypeScript block against the built package', async () => {
    const modules = {
      'ai-toolbelt': await exportsOf('ai-toolbelt'),
      'ai-toolbelt/mcp': await exportsOf('ai-toolbelt/mcp'),
      'ai-toolbelt/sandbox': await exportsOf('ai-toolbelt/sandbox'),
    };
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    await Promise.all(
      blocks.map((block, i) => writeFile(join(dir, fileOf(i)), withPrelude(block.code, modules))),
    );
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
        },
        include: ['*.ts'],
      }),
    );
    const tsc = join(root, 'node_modules', '.bin', 'tsc');
    const output = await run(tsc, ['-p', dir]).then(
      () => '',
      (error: { stdout: string }) => error.stdout,
    );
    const problems = output
      .split('\n')
      .filter(line => /block-\d+\.ts\(/.test(line))
      .map(line => {
        const i = Number(/block-(\d+)\.ts/.exec(line)![1]);
        return `${where(blocks[i]!)}: ${line.replace(/^[^:]+: /, '')}`;
      });
    expect(problems).toEqual([]);
  }, 120_000);

  for (const [i, block] of blocks.entries()) {
    if (!block.run) continue;
    it(`runs ${where(block)} and prints what it shows`, async () => {
      const expected: string[] = [];
      const lines = block.code.split('\n');
      lines.forEach((line, n) => {
        if (!line.includes('console.log(')) return;
        const comment: string[] = [];
        for (let m = n + 1; m < lines.length && lines[m]!.startsWith('// '); m++)
          comment.push(lines[m]!.slice(3));
        expected.push(comment.join(' '));
      });
      const file = join(dir, `run-${fileOf(i)}`);
      await mkdir(dir, { recursive: true });
      await writeFile(file, block.code);
      const { stdout } = await run(process.execPath, [file], { cwd: root });
      // util.inspect wraps long values over lines: compare with whitespace collapsed.
      const printed = stdout.replace(/\s+/g, ' ').trim();
      const pattern = expected
        .map(text =>
          text
            .replace(/\s+/g, ' ')
            .split('...')
            .map(part => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
            .join('.*'),
        )
        .join(' ');
      expect(printed).toMatch(new RegExp(`^${pattern}$`));
    }, 60_000);
  }
});
