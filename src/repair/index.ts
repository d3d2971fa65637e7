// Types for the repair hook (`onRepairError`) and for reading the decision a python tool
// result records; the functions behind them live in `ai-toolbelt/internal`.
export type {
  FailedRun,
  FailureStatus,
  OnRepairError,
  RepairDecision,
  RepairPolicy,
  RepairReason,
} from './repair-policy.ts';
export type { RepairRecord } from './repair-record.ts';
