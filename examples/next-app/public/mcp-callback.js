// The MCP sign-in callback page (GET /api/mcp/callback, served as /mcp-callback.js), in the tab the chat opened: tells the chat
// (its opener) which server is now connected, then closes. A file, not an inline script: the
// Content-Security-Policy runs scripts from the app's own files only.
const server = document.getElementById('result')?.dataset.server;
if (server) {
  window.opener?.postMessage({ type: 'mcp-connected', server }, location.origin);
  setTimeout(() => window.close(), 800);
}
