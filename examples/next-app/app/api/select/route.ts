import { type ToolIndex, createToolIndex } from 'ai-toolbelt';
import { refuseCrossSite } from '../../../lib/same-origin';
import { toolCatalog } from '../../../lib/tool-catalog';

// The root entry of ai-toolbelt runs on the Edge runtime: this route ranks the
// catalog with the lexical index (no embedding model, no Node APIs).
export const runtime = 'edge';

const MAX_QUERY_CHARS = 2_000;
const MAX_TOP_K = 10;

// Built on the first request and kept while the isolate is warm.
let index: Promise<ToolIndex> | undefined;
function catalogIndex(): Promise<ToolIndex> {
  index ??= (async () => {
    const built = createToolIndex();
    await built.upsert(toolCatalog);
    return built;
  })();
  return index;
}

/**
 * Which tools a request would be offered: `GET /api/select?q=will it rain in Oslo&k=3`
 * returns the top-k tools of the catalog for the text, best first, as
 * `{ query, retrieval, tools: [{ name, server, score }] }`.
 */
export async function GET(request: Request): Promise<Response> {
  const refused = refuseCrossSite(request);
  if (refused) return refused;
  const params = new URL(request.url).searchParams;
  const query = params.get('q')?.trim() ?? '';
  const topK = Number(params.get('k') ?? 3);
  if (query === '' || query.length > MAX_QUERY_CHARS)
    return Response.json(
      { error: `Expected ?q=<request text> of 1 to ${MAX_QUERY_CHARS} characters.` },
      { status: 400 },
    );
  if (!Number.isInteger(topK) || topK < 1 || topK > MAX_TOP_K)
    return Response.json(
      { error: `Expected ?k=<tools to return> between 1 and ${MAX_TOP_K}.` },
      { status: 400 },
    );
  const ready = await catalogIndex();
  const tools = await ready.search(query, { topK });
  return Response.json({ query, retrieval: ready.retrieval, tools });
}
