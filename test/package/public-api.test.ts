// The public API is a decision: every name an entry point exports is listed in
// docs/public-api.md, and this test fails when the two differ (add or remove a name there on
// purpose). `ai-toolbelt/internal` is left out: it carries no compatibility promise.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const entries: Record<string, string> = {
  'ai-toolbelt': 'src/index.ts',
  'ai-toolbelt/mcp': 'src/mcp/index.ts',
  'ai-toolbelt/sandbox': 'src/sandbox/index.ts',
  'ai-toolbelt/local-embedding': 'src/local-embedding/index.ts',
};

// TypeScript 7 has no compiler API in JS, so the barrels are read as text: they only use
// `export { a, type B } from`, `export type { ... } from`, `export * from` and
// `export type * from`, which this follows; values are then classified from the loaded module.
function declaredNames(file: string): Map<string, 'value' | 'type'> {
  const text = readFileSync(file, 'utf8');
  const names = new Map<string, 'value' | 'type'>();
  const from = (spec: string) => resolve(dirname(file), spec);
  for (const [, typeOnly, list] of text.matchAll(/export (type )?\{([^}]*)\} from '[^']+'/g)) {
    for (const raw of list!.split(',')) {
      const item = raw.trim();
      if (item === '') continue;
      const isType = typeOnly !== undefined || item.startsWith('type ');
      const name = item
        .replace(/^type /, '')
        .split(/ as /)
        .at(-1)!
        .trim();
      names.set(name, isType ? 'type' : 'value');
    }
  }
  for (const [, spec] of text.matchAll(/export \* from '([^']+)'/g)) {
    for (const [name, kind] of declaredNames(from(spec!))) names.set(name, kind);
  }
  for (const [, spec] of text.matchAll(/export type \* from '([^']+)'/g)) {
    const target = readFileSync(from(spec!), 'utf8');
    for (const [, name] of target.matchAll(/^export (?:type|interface) (\w+)/gm)) {
      names.set(name!, 'type');
    }
  }
  return names;
}

async function exportList(): Promise<string> {
  const sections: string[] = [];
  for (const [entry, file] of Object.entries(entries)) {
    const loaded: Record<string, unknown> = await import(join(root, file));
    const names = declaredNames(join(root, file));
    const lines = [...names].map(([name, kind]) => {
      if (kind === 'type') return `- \`${name}\` (type)`;
      const value = loaded[name];
      if (value === undefined) throw new Error(`${entry} declares ${name} but does not export it`);
      const valueKind =
        typeof value !== 'function'
          ? 'const'
          : Function.prototype.toString.call(value).startsWith('class')
            ? 'class'
            : 'function';
      return `- \`${name}\` (${valueKind})`;
    });
    // Nothing exported at run time may escape the text reading above.
    const missed = Object.keys(loaded).filter(name => names.get(name) !== 'value');
    if (missed.length > 0) throw new Error(`${entry}: unlisted values ${missed.join(', ')}`);
    lines.sort((a, b) => a.localeCompare(b));
    sections.push(`## \`${entry}\` (${lines.length})\n\n${lines.join('\n')}\n`);
  }
  return sections.join('\n');
}

describe('public API', () => {
  it('exports exactly the names docs/public-api.md lists', async () => {
    const file = join(root, 'docs/public-api.md');
    const doc = readFileSync(file, 'utf8');
    const at = doc.indexOf('## `ai-toolbelt`');
    const actual = await exportList();
    // After a deliberate change: PUBLIC_API_UPDATE=1 npx vitest run test/package/public-api.test.ts
    if (process.env.PUBLIC_API_UPDATE === '1' && !process.env.CI) {
      writeFileSync(file, `${at === -1 ? doc : doc.slice(0, at)}${actual}`);
      return;
    }
    expect(at, 'docs/public-api.md lists the root entry').toBeGreaterThan(0);
    expect(doc.slice(at).trim()).toBe(actual.trim());
  });
});
