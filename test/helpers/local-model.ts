import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { defaultModelsDir } from '../../src/local-embedding/models-dir.ts';

/** The folder of a fetched local model (`npx ai-toolbelt fetch-model NAME`; `.ci/run` fetches them). */
export const localModelPath = (name: string) => join(defaultModelsDir(), name);

/**
 * `describe` for tests that run a real local embedding model. Without its folder: in CI (CI set)
 * the suite fails loudly; elsewhere it is skipped with one console line.
 */
export function describeLocalModel(name: string, model: string, body: () => void): void {
  const path = localModelPath(model);
  if (existsSync(join(path, 'ai-toolbelt-model.json'))) {
    describe(name, body);
    return;
  }
  const why = `${path} is missing; run \`node src/cli.ts fetch-model ${model}\``;
  if (process.env.CI) {
    describe(name, () => {
      it('needs the local model (CI fetches it)', () => {
        throw new Error(`Local model suite cannot run in CI: ${why}`);
      });
    });
  } else {
    console.log(`[local model tests skipped] ${name}: ${why}`);
    describe.skip(name, body);
  }
}
