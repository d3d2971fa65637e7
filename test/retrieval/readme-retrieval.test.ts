// The README's tool-index example prints what this test checks: keep them in step.
import { describe, expect, it } from 'vitest';
import { createToolIndex } from '../../src/index.ts';

describe('README: the tool index (retrieval)', () => {
  it('shows the output the example really produces', async () => {
    const index = createToolIndex();
    await index.upsert([
      {
        name: 'get_weather',
        description: 'Weather forecast for a city: temperature, rain, wind',
        server: 'weather',
      },
      {
        name: 'create_issue',
        description: 'Open an issue in a GitHub repository',
        server: 'github',
      },
    ]);
    const hits = await index.search('will it rain in Paris tomorrow?', { topK: 5 });
    expect(hits).toEqual([{ name: 'get_weather', score: expect.any(Number), server: 'weather' }]);
    expect(hits[0]?.score.toFixed(3)).toBe('0.315');
    expect(await index.search('is it going to be sunny in Oslo?', { topK: 5 })).toEqual([]);
  });
});
