import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CatalogFormatError } from '../../../src/errors/catalog-format-error.ts';
import { readEvalQueries, readToolCatalog } from '../../../src/retrieval/eval/catalog-file.ts';

async function file(content: string): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), 'toolbelt-catalog-')), 'f.jsonl');
  await writeFile(path, content);
  return path;
}

describe('catalog files', () => {
  it('reads tools and skips blank lines', async () => {
    const path = await file('{"name":"a","description":"x"}\n\n{"name":"b","server":"s"}\n');
    expect(await readToolCatalog(path)).toEqual([
      { name: 'a', description: 'x' },
      { name: 'b', server: 's' },
    ]);
  });

  it('names the line of invalid JSON, bad fields and duplicates', async () => {
    await expect(readToolCatalog(await file('{"name":"a"}\n{oops\n'))).rejects.toThrow(
      /f\.jsonl:2: not valid JSON/,
    );
    await expect(readToolCatalog(await file('{"name":"a","description":3}\n'))).rejects.toThrow(
      /f\.jsonl:1: .*tool\.description.*expected a string/,
    );
    const error = await readToolCatalog(await file('{"name":"a"}\n{"name":"a"}\n')).catch(e => e);
    expect(CatalogFormatError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      line: 2,
      message: expect.stringMatching(/duplicate tool name "a" \(first on line 1\)/),
    });
  });

  it('reads queries and checks gold', async () => {
    expect(
      await readEvalQueries(await file('{"id":"q1","query":"weather","gold":["w"]}\n')),
    ).toEqual([{ id: 'q1', query: 'weather', gold: ['w'] }]);
    await expect(readEvalQueries(await file('{"query":"x","gold":[]}\n'))).rejects.toThrow(
      /:1: "gold"/,
    );
    await expect(readEvalQueries(await file('\n{"gold":["a"]}\n'))).rejects.toThrow(/:2: "query"/);
  });
});
