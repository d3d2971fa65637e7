export { errorFingerprint } from './error-fingerprint.ts';
export { extractCode } from './extract-code.ts';
export { repairCode } from './repair-code.ts';
export {
  HARD_ATTEMPT_LIMIT,
  decideRepair,
  type FailedRun,
  type FailureStatus,
  type OnRepairError,
  type RepairDecision,
  type RepairPolicy,
  type RepairReason,
} from './repair-policy.ts';
export { trimError, type TrimErrorOptions } from './trim-error.ts';
export {
  REPAIR_RECORD_KEY,
  failureOutput,
  trailingFailures,
  type PriorFailure,
  type RepairRecord,
} from './repair-record.ts';
