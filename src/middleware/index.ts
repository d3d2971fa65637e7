export { repairGuardMiddleware, type RepairGuardOptions } from './repair-guard-middleware.ts';
export {
  calledTools,
  extractQuery,
  type ConversationMessage,
  type QuerySource,
} from './conversation.ts';
export type { ToolLearnEvent } from './learn-from-turn.ts';
export type { SelectionMarker } from './selection-marker.ts';
export type { Stability, StickyOutcome } from './sticky-seats.ts';
export {
  toolSelection,
  toolSelectionMiddleware,
  type ToolMissEvent,
  type ToolSelection,
  type ToolSelectionSetup,
} from './tool-selection.ts';
export {
  ToolSelector,
  type OfferedTool,
  type SelectedTool,
  type Selection,
  type SelectionReason,
  type ToolSelectionEvent,
  type ToolSelectionOptions,
} from './tool-selector.ts';
export {
  providerAcceptsToolResultImages,
  toolResultImagesMiddleware,
  type ModelIdentity,
  type ToolResultImagesOptions,
} from './tool-result-images-middleware.ts';
