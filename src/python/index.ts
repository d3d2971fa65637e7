export type { PythonRunResult, PythonSandbox } from './python-sandbox.ts';
export type { PythonNetwork } from './python-tool-description.ts';
export type { CellState, PythonAttemptEvent, PythonToolOutput } from './python-tool-output.ts';
export type { PythonConversation } from './run-python.ts';
export { pythonTool, type PythonToolOptions } from './python-tool.ts';
export { repairTimeline, type RepairDataPart } from './repair-timeline.ts';
export type { PythonArtifact, SaveArtifact } from './python-artifacts.ts';
export type { PythonResult } from './python-results.ts';
export { pythonAttachments, type PythonAttachments } from './python-attachments.ts';
