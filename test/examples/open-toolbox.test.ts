// The examples' index set-up: hybrid with an embedding model, lexical (and
// said so) without one or when the model fails at start-up.
import { MockEmbeddingModelV4 } from 'ai/test';
import { createStorage } from 'unstorage';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMcpConfig } from '../../examples/hono-server/src/load-mcp-config.ts';
import { openToolbox } from '../../examples/hono-server/src/open-toolbox.ts';
import { hashingEmbeddingModel } from '../helpers/hashing-embedding-model.ts';

const config = new URL('../../examples/hono-server/mcp.config.json', import.meta.url).pathname;
const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map(toolbox => toolbox.close()));
});

describe('openToolbox (hono example)', () => {
  it('indexes the tools with the embedding model (hybrid) and keeps their vectors in the store', async () => {
    const store = createStorage();
    const warnings: string[] = [];
    const toolbox = await openToolbox({
      servers: await loadMcpConfig(config),
      embeddingModel: hashingEmbeddingModel(),
      store,
      log: { log: () => {}, warn: message => warnings.push(message) },
    });
    opened.push(toolbox);
    expect(toolbox.index.retrieval).toBe('hybrid');
    expect(toolbox.index.size).toBe(10);
    expect(await store.getKeys()).toHaveLength(10);
    expect(warnings).toEqual([]);
  });

  it('falls back to lexical, with the reason, when the embedding model fails', async () => {
    const warnings: string[] = [];
    const toolbox = await openToolbox({
      servers: await loadMcpConfig(config),
      embeddingModel: new MockEmbeddingModelV4({
        doEmbed: async () => {
          throw new Error('The model `text-embedding-3-small` does not exist');
        },
      }),
      log: { log: () => {}, warn: message => warnings.push(message) },
    });
    opened.push(toolbox);
    expect(toolbox.index.retrieval).toBe('lexical');
    expect((await toolbox.index.search('temperature last week', { topK: 1 }))[0]?.name).toBe(
      'temperature_history',
    );
    expect(warnings).toEqual([
      expect.stringMatching(
        /^\[retrieval\] embedding the tools failed \(.*does not exist.*\); selection is lexical$/,
      ),
    ]);
  });
});
