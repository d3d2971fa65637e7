// What a tool is embedded as, measured: the dense channel alone over a catalog whose tools are
// changed so the embedding text (`toolEmbeddingText`: "name words (name) [server]: description
// Parameters: a, b") leaves out or adds one part.
import { toolFields } from '../../src/retrieval/tool-fields.ts';
import type { ToolDescriptor } from '../../src/retrieval/types.ts';

/** Each variant of a catalog's tools, the embedding text as it is first. */
export const TEXT_VARIANTS: readonly {
  text: string;
  tools: (tools: readonly ToolDescriptor[]) => ToolDescriptor[];
}[] = [
  { text: 'name words, name, server, description, parameter names', tools: tools => [...tools] },
  {
    text: 'without the server',
    tools: tools => tools.map(({ server: _server, ...tool }) => tool),
  },
  {
    text: 'without parameter names',
    tools: tools => tools.map(({ inputSchema: _schema, ...tool }) => tool),
  },
  {
    text: 'with parameter descriptions',
    tools: tools =>
      tools.map(tool => {
        const described = toolFields(tool).parameterDescriptions;
        return described
          ? { ...tool, description: `${tool.description ?? ''} ${described}` }
          : tool;
      }),
  },
  {
    text: 'description cut to 200 characters',
    tools: tools =>
      tools.map(tool =>
        tool.description === undefined
          ? tool
          : { ...tool, description: tool.description.slice(0, 200) },
      ),
  },
];
