import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { type DocBlock, docBlocks, markdownFiles } from './doc-blocks.ts';
import { typeCheckBlocks } from './type-check-blocks.ts';

// README and docs code, checked as a reader copies it: every ```ts block of every Markdown file
// under docs/ and of the READMEs type-checks against the built package (`npm test` builds
// first; the compiler's exit status decides), and blocks marked `<!-- doc-test: run -->` run
// offline and print what their `// ` comments after each console.log say (`...` matches anything).
const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const dir = join(root, 'test-results', 'doc-blocks');
const files = markdownFiles(root);
const blocks = docBlocks(root, files);
const fileOf = (i: number) => `block-${String(i).padStart(3, '0')}.ts`;
const where = (block: DocBlock) => `${block.file}:${block.line}`;

async function exportsOf(specifier: string): Promise<string[]> {
  return Object.keys(await import(specifier));
}
const modules = async () => ({
  'ai-toolbelt': await exportsOf('ai-toolbelt'),
  'ai-toolbelt/mcp': await exportsOf('ai-toolbelt/mcp'),
  'ai-toolbelt/sandbox': await exportsOf('ai-toolbelt/sandbox'),
  'ai-toolbelt/local-embedding': await exportsOf('ai-toolbelt/local-embedding'),
});

describe('README and docs code', () => {
  it('found the blocks of every doc', () => {
    expect(files).toEqual(
      expect.arrayContaining(['README.md', 'docs/retrieval.md', 'examples/next-app/README.md']),
    );
    expect(blocks.length).toBeGreaterThan(20);
    expect(new Set(blocks.map(block => block.file))).toContain('docs/retrieval.md');
    expect(blocks.some(block => block.run)).toBe(true);
  });

  it('type-checks every TypeScript block against the built package', async () => {
    const { exitCode, problems } = await typeCheckBlocks({
      root,
      dir,
      blocks,
      modules: await modules(),
    });
    expect(problems).toEqual([]);
    expect(exitCode).toBe(0);
  }, 120_000);

  it('fails on a broken block, and on a compiler failure no block line names', async () => {
    const scratch = join(root, 'test-results', 'doc-blocks-broken');
    const broken: DocBlock = {
      file: 'broken.md',
      line: 10,
      code: "const index = createToolIndex();\nawait index.search(42, { topK: 'five' });",
      run: false,
    };
    const found = await typeCheckBlocks({
      root,
      dir: scratch,
      blocks: [broken],
      modules: await modules(),
    });
    expect(found.exitCode).not.toBe(0);
    expect(found.problems.join('\n')).toMatch(/^broken\.md:11: error TS2345: /);
    // A failure outside any block (here a type library that does not exist) fails too.
    const global = await typeCheckBlocks({
      root,
      dir: scratch,
      blocks: [{ ...broken, code: 'export const fine = 1;' }],
      modules: await modules(),
      compilerOptions: { types: ['node', 'no-such-types'] },
    });
    expect(global.exitCode).not.toBe(0);
    expect(global.problems.join('\n')).toMatch(/no-such-types/);
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
