/**
 * One line of the doctor's report.
 *
 * @example
 * ```ts
 * const check: DoctorCheck = { name: 'Docker engine', ok: true, detail: 'answers' };
 * ```
 */
export type DoctorCheck = {
  /** What was checked. */
  name: string;
  /** Whether it is fine. */
  ok: boolean;
  /** What was found. */
  detail: string;
  /** What to do about it, when it is not fine. */
  fix?: string;
};
