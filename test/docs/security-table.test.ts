// The security tables name a test for each boundary: every file they name must exist, so a
// renamed or deleted test cannot leave a boundary pointing at nothing.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

describe('security tables', () => {
  for (const file of ['README.md', 'docs/security.md']) {
    it(`${file} names only tests that exist`, () => {
      const text = readFileSync(join(root, file), 'utf8');
      const named = [...text.matchAll(/`(test\/[\w./-]+\.ts)`/g)].map(match => match[1]!);
      expect(named.length).toBeGreaterThan(5);
      expect(named.filter(path => !existsSync(join(root, path)))).toEqual([]);
    });
  }
});
