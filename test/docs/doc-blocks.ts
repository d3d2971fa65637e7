import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** A ```ts block of a Markdown file. */
export type DocBlock = {
  /** e.g. `README.md`. */
  file: string;
  /** 1-based line of the block's first code line. */
  line: number;
  /** The code. */
  code: string;
  /** Marked `<!-- doc-test: run -->`: runs offline, and prints what its comments say. */
  run: boolean;
};

/** The READMEs (the repository's and each example's) and every Markdown file under docs/. */
export function markdownFiles(root: string): string[] {
  const files = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      if (entry.isDirectory()) walk(`${dir}/${entry.name}`);
      else if (entry.name.endsWith('.md')) files.push(`${dir}/${entry.name}`);
    }
  };
  walk('docs');
  for (const example of readdirSync(join(root, 'examples')).sort()) {
    if (existsSync(join(root, 'examples', example, 'README.md')))
      files.push(`examples/${example}/README.md`);
  }
  return files;
}

/** Every ```ts block of `files` (paths relative to `root`). */
export function docBlocks(root: string, files: readonly string[]): DocBlock[] {
  const blocks: DocBlock[] = [];
  for (const file of files) {
    const lines = readFileSync(`${root}/${file}`, 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (lines[i]!.trim() !== '```ts') continue;
      const end = lines.findIndex((text, j) => j > i && text.trim() === '```');
      const run = lines.slice(Math.max(0, i - 2), i).some(text => text.includes('doc-test: run'));
      blocks.push({ file, line: i + 2, code: lines.slice(i + 1, end).join('\n'), run });
      i = end;
    }
  }
  return blocks;
}

// What fragments may use without defining it: the things a reader has from the text around.
const FREE: Record<string, string> = {
  token: 'declare const token: string;',
  userId: 'declare const userId: string;',
  prompt: 'declare const prompt: string;',
  csvText: 'declare const csvText: string;',
  model: "declare const model: Exclude<import('ai').LanguageModel, string>;",
  tools: "declare const tools: import('ai').ToolSet;",
  messages: "declare const messages: import('ai').UIMessage[];",
  toolbox: "declare const toolbox: import('ai-toolbelt/mcp').McpToolbox;",
  servers: "declare const servers: Record<string, import('ai-toolbelt/mcp').McpServerConfig>;",
  showForm: "declare const showForm: import('ai-toolbelt/mcp').McpElicitationHandler;",
  sandbox: "declare const sandbox: import('ai-toolbelt/sandbox').DockerSandbox;",
  writer: "declare const writer: import('ai').UIMessageStreamWriter;",
  session: 'declare const session: { user: { id: string } };',
  auth: 'declare function auth(): Promise<{ user: { id: string } }>;',
  getToolbox: "declare function getToolbox(): Promise<import('ai-toolbelt/mcp').McpToolbox>;",
  openai: "import { openai } from '@ai-sdk/openai';",
  createStorage: "import { createStorage } from 'unstorage';",
  redisDriver: "import redisDriver from 'unstorage/drivers/redis';",
};

const AI = [
  'streamText',
  'generateText',
  'wrapLanguageModel',
  'stepCountIs',
  'convertToModelMessages',
  'createUIMessageStream',
  'createUIMessageStreamResponse',
  'toUIMessageStream',
  'tool',
];

/**
 * The block as a module that type-checks on its own: imports and declarations for the names it
 * uses without defining them (library exports from `modules`, the usual free names above).
 */
export function withPrelude(code: string, modules: Record<string, readonly string[]>): string {
  const defined = (name: string) =>
    new RegExp(
      `(import[^;]*[{\\s,]${name}[\\s,}][^;]*from|import\\s+${name}\\s+from|(const|let|var|using|function|class)\\s+${name}\\b|\\{[^}]*\\b${name}\\b(?!\\s*:)[^}]*\\}\\s*=)`,
    ).test(code);
  const used = (name: string) => new RegExp(`(?<![.\\w'"])${name}\\b`).test(code);
  const prelude: string[] = [];
  const sources: Record<string, readonly string[]> = { ai: AI, ...modules };
  for (const [module, names] of Object.entries(sources)) {
    const wanted = names.filter(name => used(name) && !defined(name) && FREE[name] === undefined);
    if (wanted.length > 0) prelude.push(`import { ${wanted.join(', ')} } from '${module}';`);
  }
  for (const [name, declaration] of Object.entries(FREE)) {
    if (used(name) && !defined(name)) prelude.push(declaration);
  }
  return `${prelude.join('\n')}\n${code}\nexport {};\n`;
}
