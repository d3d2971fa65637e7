import { MISSING_MODEL_MESSAGE, chatModel, modelDescription } from '../lib/model';
import { getToolbelt } from '../lib/toolbelt';
import { Chat } from './chat';

// Rendered per request: the status below is the running server's, not the build machine's.
export const dynamic = 'force-dynamic';

/** The chat page, with what the server has (model, MCP servers, python) on top. */
export default async function Page() {
  const { toolbox, sandbox, pythonProblem } = await getToolbelt();
  const servers = Object.values(toolbox.status())
    .map(server => `${server.name} (${server.state}, ${server.tools} tools)`)
    .join(', ');
  return (
    <main>
      <header>
        <h1>
          ai-toolbelt <span>Next.js chat</span>
        </h1>
        <p className="status">
          Model: {chatModel() ? modelDescription() : 'none'}. MCP servers: {servers || 'none'}.
          {chatModel() ? null : <span className="warn model-missing">{MISSING_MODEL_MESSAGE}</span>}
          {sandbox ? null : (
            <span className="warn python-disabled">Python tool disabled: {pythonProblem}</span>
          )}
        </p>
      </header>
      <Chat />
    </main>
  );
}
