import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import type { Results } from './results.ts';

/**
 * What the docs may quote: blocks (`<!-- figures:NAME -->` ... `<!-- /figures -->` on lines of
 * their own, usually a table) and inline values (`<!-- figure:NAME -->971 ms<!-- /figure -->`),
 * each rendered from the results files.
 */
export type Renderers = {
  blocks: Record<string, (results: Results) => string>;
  values: Record<string, (results: Results) => string>;
};

/** One doc rendered: its new text, and what is wrong with it. */
export type RenderedDoc = { file: string; text: string; problems: string[] };

const BLOCK_START = /^<!-- figures:([\w.-]+) -->$/;
const BLOCK_END = '<!-- /figures -->';
const INLINE = /<!-- figure:([\w.-]+) -->([\s\S]*?)<!-- \/figure -->/g;
// A measured quantity: 971 ms, 1.2 s, 1.2 runs/s, 27 MiB, 0.12x, 51%, 4 CPU-seconds.
const MEASUREMENT =
  /(?<![\w.])\d[\d,]*(\.\d+)?(\s?(ms|s|runs\/s|exec\/s|MiB|GiB|MB|KB|CPU-seconds?)\b|x\b|%)/g;

/** The Markdown files whose figures are generated: README, docs/**, the examples' READMEs. */
export function docFiles(root: string): string[] {
  const files = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  walk('docs');
  for (const example of readdirSync(join(root, 'examples'))) {
    if (existsSync(join(root, 'examples', example, 'README.md')))
      files.push(`examples/${example}/README.md`);
  }
  return files;
}

/**
 * Renders every figure of one Markdown text and formats it as `prettier --write` would. Problems:
 * unknown names, renderers that fail (a missing results file or row), unclosed blocks, and
 * measurements written by hand in a paragraph about a bench.
 */
export async function renderDoc({
  file,
  text,
  results,
  renderers,
  root,
}: {
  /** Path relative to `root`, for messages and prettier's config. */
  file: string;
  /** The doc's current text. */
  text: string;
  results: Results;
  renderers: Renderers;
  /** The repository root. */
  root: string;
}): Promise<RenderedDoc> {
  const problems: string[] = [];
  const render = (kind: 'blocks' | 'values', name: string, line: number): string | undefined => {
    const renderer = renderers[kind][name];
    if (renderer === undefined) {
      problems.push(`${file}:${line}: no ${kind === 'blocks' ? 'block' : 'value'} named ${name}`);
      return undefined;
    }
    try {
      return renderer(results);
    } catch (error) {
      problems.push(`${file}:${line}: ${name}: ${(error as Error).message}`);
      return undefined;
    }
  };
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const start = BLOCK_START.exec(lines[i]!);
    if (start === null) {
      out.push(
        lines[i]!.replace(INLINE, (whole, name: string) => {
          const value = render('values', name, i + 1);
          return value === undefined ? whole : `<!-- figure:${name} -->${value}<!-- /figure -->`;
        }),
      );
      continue;
    }
    const end = lines.findIndex((line, j) => j > i && line === BLOCK_END);
    if (end < 0) {
      problems.push(`${file}:${i + 1}: block ${start[1]} has no ${BLOCK_END} line`);
      out.push(...lines.slice(i));
      break;
    }
    const rendered = render('blocks', start[1]!, i + 1);
    out.push(lines[i]!);
    if (rendered === undefined) out.push(...lines.slice(i + 1, end));
    else out.push('', rendered.trim(), '');
    out.push(BLOCK_END);
    i = end;
  }
  const path = join(root, file);
  const config = (await resolveConfig(path)) ?? {};
  const formatted = await format(out.join('\n'), { ...config, filepath: path });
  problems.push(...strayFigures(file, formatted));
  return { file, text: formatted, problems };
}

/**
 * Measurements written by hand in a paragraph that quotes a bench (names `npm run bench:` or
 * `bench/`): every such figure must come from a results file.
 */
export function strayFigures(file: string, text: string): string[] {
  const problems: string[] = [];
  const lines = text.split('\n');
  let inBlock = false;
  let inFence = false;
  let paragraph: { line: number; text: string }[] = [];
  const flush = (): void => {
    const joined = paragraph.map(({ text }) => text).join(' ');
    if (/npm run bench:|\bbench\//.test(joined)) {
      for (const { line, text } of paragraph) {
        const bare = text.replace(INLINE, '').replace(/`[^`]*`/g, '');
        for (const match of bare.matchAll(MEASUREMENT)) {
          problems.push(`${file}:${line}: "${match[0]}" is not from a results file`);
        }
      }
    }
    paragraph = [];
  };
  lines.forEach((text, i) => {
    if (text.startsWith('```')) inFence = !inFence;
    if (BLOCK_START.test(text)) inBlock = true;
    if (text === BLOCK_END) {
      inBlock = false;
      return;
    }
    if (inBlock || inFence || text.trim() === '' || text.startsWith('#')) {
      flush();
      return;
    }
    // Each list item and table row is a paragraph of its own.
    if (/^\s*([-*]|\d+\.|\|)\s/.test(text)) flush();
    paragraph.push({ line: i + 1, text });
  });
  flush();
  return problems;
}

/**
 * Renders every doc. With `check`, also reports each doc whose text differs from what the results
 * files give (naming the blocks and values that differ).
 */
export async function renderDocs({
  root,
  results,
  renderers,
  check = false,
}: {
  root: string;
  results: Results;
  renderers: Renderers;
  /** Report differences from the files as problems. */
  check?: boolean;
}): Promise<RenderedDoc[]> {
  const docs: RenderedDoc[] = [];
  for (const file of docFiles(root)) {
    const text = readFileSync(join(root, file), 'utf8');
    const doc = await renderDoc({ file, text, results, renderers, root });
    if (check && doc.text !== text) {
      const differing = differingFigures(text, doc.text);
      doc.problems.push(
        `${file}: ${differing.length > 0 ? differing.join(', ') : 'formatting'} differ from bench/results; run \`node scripts/figures.ts\``,
      );
    }
    docs.push(doc);
  }
  return docs;
}

function figures(text: string): { name: string; content: string }[] {
  const found: { name: string; content: string }[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = BLOCK_START.exec(lines[i]!);
    if (start !== null) {
      const end = lines.findIndex((line, j) => j > i && line === BLOCK_END);
      found.push({
        name: start[1]!,
        content: lines.slice(i + 1, end < 0 ? undefined : end).join('\n'),
      });
      continue;
    }
    for (const match of lines[i]!.matchAll(INLINE))
      found.push({ name: match[1]!, content: match[2]! });
  }
  return found;
}

function differingFigures(actual: string, expected: string): string[] {
  const a = figures(actual);
  const b = figures(expected);
  return b.flatMap((figure, i) =>
    a[i]?.name !== figure.name || a[i]?.content.trim() !== figure.content.trim()
      ? [figure.name]
      : [],
  );
}
