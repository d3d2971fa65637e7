export type { McpAuthData, ToolSelectionData, ToolbeltUIMessage } from './chat-message.ts';
export { chatResponse, type ChatResponseOptions } from './chat-response.ts';
export {
  readChatRequest,
  type ChatRequest,
  type ReadChatRequestOptions,
} from './read-chat-request.ts';
