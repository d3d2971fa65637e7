export { repairGuardMiddleware, type RepairGuardOptions } from './repair-guard-middleware.ts';
export type { QuerySource } from './conversation.ts';
export type { ToolExecutionEnd, ToolLearnEvent } from './selection/learn-from-calls.ts';
export type { Stability, StickyOutcome } from './selection/sticky-seats.ts';
export {
  toolSelection,
  toolSelectionMiddleware,
  type ToolMissEvent,
  type ToolSelection,
  type ToolSelectionOptions,
} from './selection/tool-selection.ts';
export type {
  SelectedTool,
  SelectionReason,
  ToolSelectionEvent,
} from './selection/tool-selector.ts';
export {
  providerAcceptsToolResultImages,
  toolResultImagesMiddleware,
  type ModelIdentity,
  type ToolResultImagesOptions,
} from './tool-result-images-middleware.ts';
