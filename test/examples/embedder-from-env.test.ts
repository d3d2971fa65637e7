// Which embedding model the examples' tool retrieval uses, from the environment: EMBEDDER, then
// OPENAI_EMBEDDING_MODEL with a key, then the local model when installed, then the provider's
// with a key, then none (lexical). Both examples' functions, over the same table.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embedderFromEnv as honoEmbedder } from '../../examples/hono-server/src/embedder-from-env.ts';
import { defaultModelsDir } from '../../src/local-embedding/models-dir.ts';
import { describeLocalModel } from '../helpers/local-model.ts';

type Env = Record<string, string | undefined>;
type Setup = {
  embeddingModel?: { provider: string; modelId: string };
  description: string;
  close(): Promise<void>;
};
// Loaded by path: the Next app's files use extensionless imports (see next-routes.test.ts).
const nextEmbedder = async (env: Env) =>
  (
    (await import(new URL('../../examples/next-app/lib/embedder.ts', import.meta.url).href)) as {
      embedderFromEnv(env: Env): Promise<Setup>;
    }
  ).embedderFromEnv(env);
const examples: [string, (env: Env) => Promise<Setup>][] = [
  ['hono-server', async env => honoEmbedder(env) as Setup],
  ['next-app', nextEmbedder],
];

const installed = defaultModelsDir();
let empty: string;
let broken: string;
beforeAll(async () => {
  empty = await mkdtemp(join(tmpdir(), 'aitb-no-models-'));
  // A model folder whose manifest is not JSON: there, but not usable.
  broken = await mkdtemp(join(tmpdir(), 'aitb-broken-models-'));
  await mkdir(join(broken, 'all-MiniLM-L6-v2'));
  await writeFile(join(broken, 'all-MiniLM-L6-v2', 'ai-toolbelt-model.json'), '{not json');
});
afterAll(async () => {
  await rm(empty, { recursive: true, force: true });
  await rm(broken, { recursive: true, force: true });
});

async function choose(example: (env: Env) => Promise<Setup>, env: Env) {
  const setup = await example(env);
  await setup.close();
  return {
    model:
      setup.embeddingModel && `${setup.embeddingModel.provider}:${setup.embeddingModel.modelId}`,
    description: setup.description,
  };
}

const NO_MODEL =
  'no embedding model: run npx ai-toolbelt fetch-model for the local one, or set OPENAI_API_KEY';

for (const [name, example] of examples) {
  describe(`${name}: without the local model`, () => {
    const env = (more: Env = {}): Env => ({ AI_TOOLBELT_MODELS_DIR: empty, ...more });

    it('uses the provider with a key, none (lexical) without, and says what to do', async () => {
      expect(await choose(example, env({ OPENAI_API_KEY: 'k' }))).toEqual({
        model: 'openai.embedding:text-embedding-3-small',
        description: 'openai:text-embedding-3-small at api.openai.com',
      });
      expect(await choose(example, env())).toEqual({ model: undefined, description: NO_MODEL });
      expect(
        await choose(example, env({ OPENAI_API_KEY: 'k', OPENAI_EMBEDDING_MODEL: 'off' })),
      ).toEqual({
        model: undefined,
        description:
          'no embedding model: OPENAI_EMBEDDING_MODEL=off; run npx ai-toolbelt fetch-model for the local one',
      });
    });

    it('says why when EMBEDDER names what it cannot have, and still opens (lexical)', async () => {
      const local = await choose(example, env({ EMBEDDER: 'local' }));
      expect(local.model).toBeUndefined();
      expect(local.description).toContain(join(empty, 'all-MiniLM-L6-v2'));
      expect(local.description).toContain('npx ai-toolbelt fetch-model all-MiniLM-L6-v2');
      expect(await choose(example, env({ EMBEDDER: 'openai' }))).toEqual({
        model: undefined,
        description: 'EMBEDDER=openai needs OPENAI_API_KEY',
      });
      expect((await choose(example, env({ EMBEDDER: 'bogus' }))).description).toBe(
        'EMBEDDER=bogus is none of auto, lexical, local[:NAME], openai[:MODEL]',
      );
    });

    it('names a broken local model it passed over', async () => {
      const withKey = await choose(example, {
        AI_TOOLBELT_MODELS_DIR: broken,
        OPENAI_API_KEY: 'k',
      });
      expect(withKey.model).toBe('openai.embedding:text-embedding-3-small');
      expect(withKey.description).toMatch(
        /^openai:text-embedding-3-small at api\.openai\.com \(not local: .*is not valid JSON/,
      );
      const without = await choose(example, { AI_TOOLBELT_MODELS_DIR: broken });
      expect(without.model).toBeUndefined();
      expect(without.description).toMatch(/is not valid JSON.*; no embedding model: run npx/);
    });
  });

  describeLocalModel(`${name}: with the local model installed`, 'all-MiniLM-L6-v2', () => {
    const env = (more: Env = {}): Env => ({ AI_TOOLBELT_MODELS_DIR: installed, ...more });
    const local = {
      model: 'local:all-MiniLM-L6-v2',
      description: `local all-MiniLM-L6-v2 (${join(installed, 'all-MiniLM-L6-v2')})`,
    };

    it('uses it, with or without a key (and with OPENAI_EMBEDDING_MODEL=off)', async () => {
      expect(await choose(example, env())).toEqual(local);
      expect(await choose(example, env({ OPENAI_API_KEY: 'k' }))).toEqual(local);
      expect(
        await choose(example, env({ OPENAI_API_KEY: 'k', OPENAI_EMBEDDING_MODEL: 'off' })),
      ).toEqual(local);
    });

    it('gives way to what is asked for: EMBEDDER, or a provider model named with a key', async () => {
      const key = { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' };
      expect(
        await choose(example, env({ ...key, OPENAI_EMBEDDING_MODEL: 'text-embedding-3-large' })),
      ).toEqual({
        model: 'openai.embedding:text-embedding-3-large',
        description: 'openai:text-embedding-3-large at 127.0.0.1:9',
      });
      expect(await choose(example, env({ ...key, EMBEDDER: 'openai' }))).toEqual({
        model: 'openai.embedding:text-embedding-3-small',
        description: 'openai:text-embedding-3-small at 127.0.0.1:9',
      });
      expect(await choose(example, env({ ...key, EMBEDDER: 'lexical' }))).toEqual({
        model: undefined,
        description: 'EMBEDDER=lexical',
      });
      expect(await choose(example, env({ ...key, EMBEDDER: 'local' }))).toEqual(local);
    });
  });

  describeLocalModel(`${name}: EMBEDDER=local:NAME`, 'paraphrase-MiniLM-L3-v2', () => {
    it('uses that model', async () => {
      const env = { AI_TOOLBELT_MODELS_DIR: installed, EMBEDDER: 'local:paraphrase-MiniLM-L3-v2' };
      expect(await choose(example, env)).toEqual({
        model: 'local:paraphrase-MiniLM-L3-v2',
        description: `local paraphrase-MiniLM-L3-v2 (${join(installed, 'paraphrase-MiniLM-L3-v2')})`,
      });
    });
  });
}
