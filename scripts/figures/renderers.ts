// Every figure the docs may quote, by name (see update-docs.ts for the markers).
import { agentSandboxFigures } from './agent-sandbox-figures.ts';
import { egressFigureRenderers } from './egress-figures.ts';
import { embeddingFigures } from './embedding-figures.ts';
import { kubernetesFigures } from './kubernetes-figures.ts';
import { middlewareFigures } from './middleware-figures.ts';
import { qualityFigures } from './quality-figures.ts';
import { retrievalFigures } from './retrieval-figures.ts';
import { sandboxFigures } from './sandbox-figures.ts';
import type { Renderers } from './update-docs.ts';

/** The blocks and values of README, docs/** and the examples' READMEs. */
export const RENDERERS: Renderers = [
  agentSandboxFigures,
  egressFigureRenderers,
  embeddingFigures,
  kubernetesFigures,
  middlewareFigures,
  qualityFigures,
  retrievalFigures,
  sandboxFigures,
].reduce<Renderers>(
  (all, part) => ({
    blocks: { ...all.blocks, ...part.blocks },
    values: { ...all.values, ...part.values },
  }),
  { blocks: {}, values: {} },
);
