import { type Attributes, type Span, context, trace } from '@opentelemetry/api';
import { sha256Base64Url } from '../util/sha256.ts';
import { ATTR, SPAN } from './attributes.ts';
import { telemetrySettings } from './configure-telemetry.ts';
import { instruments } from './instruments.ts';
import { activeTracer, inSpan, markFailed } from './tracer.ts';

/** How one python attempt ended, for its span and the repair-outcome metric. */
export type AttemptOutcome =
  | {
      status: 'success';
      /** Counted over the turn in agent mode: above 1 means repaired. */ attempt: number;
    }
  | { status: string; fingerprint: string; decision: 'repair' | 'halt'; reason: string }
  | { status: 'exception'; error: unknown };

/** One attempt's span: run its sandbox work inside it, then end it with the outcome. */
export type PythonAttempt = {
  within: <T>(work: () => Promise<T>) => Promise<T>;
  end: (outcome: AttemptOutcome) => void;
};

/**
 * Traces one attempt of a python tool call: an `ai_toolbelt.python.attempt` span (under the
 * AI SDK's `execute_tool python` span) with the attempt number, mode and code size (the code
 * itself only with `recordInputs`), ended with the status, the error's type and a digest of
 * its fingerprint (the fingerprint is error text: equal digests are the repeated error), the
 * repair decision, its reason and the repairs left; and the `ai_toolbelt.repair.outcomes`
 * metric. Run the attempt's sandbox work through `within` so its spans nest; `end` is
 * idempotent. With nobody listening both are pass-throughs.
 *
 * @example
 * ```ts
 * const traced = traceAttempt({ toolName: 'python', toolCallId, attempt, mode: 'agent', code, maxRepairs: 2 });
 * const result = await traced.within(() => runPython(request));
 * traced.end({ status: 'success', attempt });
 * ```
 */
export function traceAttempt({
  toolName,
  toolCallId,
  attempt,
  mode,
  code,
  maxRepairs,
}: {
  /** The tool's name in the tool set. */
  toolName: string;
  /** The AI SDK's tool call id. */
  toolCallId: string;
  /** 1-based attempt number (agent mode continues the turn's count). */
  attempt: number;
  /** `agent` (the main model repairs) or `inline` (a repair model does). */
  mode: 'agent' | 'inline';
  /** The attempt's code. */
  code: string;
  /** The policy's repair budget (`maxRepairs`). */
  maxRepairs: number;
}): PythonAttempt {
  const tracer = activeTracer();
  const span = tracer?.startSpan(SPAN.pythonAttempt, {
    attributes: {
      [ATTR.toolName]: toolName,
      [ATTR.toolCallId]: toolCallId,
      [ATTR.pythonAttempt]: attempt,
      [ATTR.pythonMode]: mode,
      [ATTR.pythonCodeBytes]: new TextEncoder().encode(code).byteLength,
      ...(telemetrySettings().recordInputs ? { [ATTR.pythonCode]: code } : {}),
    },
  });
  const active = span && trace.setSpan(context.active(), span);
  let ended = false;
  return {
    within: work => (active === undefined ? work() : context.with(active, work)),
    end: outcome => {
      if (ended) return;
      ended = true;
      // Repairs the policy still allows now that this attempt failed.
      const budgetLeft = Math.max(0, maxRepairs - (attempt - 1));
      if (span !== undefined) endAttempt(span, outcome, budgetLeft);
      recordAttemptOutcome(outcome);
    },
  };
}

function endAttempt(span: Span, outcome: AttemptOutcome, budgetLeft: number): void {
  if ('error' in outcome) {
    markFailed(span, outcome.error);
  } else if ('fingerprint' in outcome) {
    const attributes: Attributes = {
      [ATTR.pythonStatus]: outcome.status,
      [ATTR.pythonErrorType]: errorTypeOf(outcome),
      [ATTR.repairFingerprint]: fingerprintDigest(outcome.fingerprint),
      [ATTR.repairDecision]: outcome.decision,
      [ATTR.repairReason]: outcome.reason,
      [ATTR.repairBudgetLeft]: budgetLeft,
    };
    span.setAttributes(attributes);
    markFailed(span, undefined, errorTypeOf(outcome));
  } else {
    span.setAttribute(ATTR.pythonStatus, 'success');
  }
  span.end();
}

// `repair` / `halt` (with the reason) for failures, `repaired` for a success after a repair.
function recordAttemptOutcome(outcome: AttemptOutcome): void {
  const meter = instruments();
  if (meter === undefined || 'error' in outcome) return;
  if ('fingerprint' in outcome) {
    meter.repairOutcomes.add(1, {
      [ATTR.repairOutcome]: outcome.decision,
      [ATTR.repairReason]: outcome.reason,
      [ATTR.pythonStatus]: outcome.status,
    });
  } else if (outcome.attempt > 1) {
    meter.repairOutcomes.add(1, { [ATTR.repairOutcome]: 'repaired' });
  }
}

/**
 * Runs inline mode's repair-model call inside an `ai_toolbelt.repair` span, so the AI SDK's
 * spans of that call nest under the attempt it repairs.
 *
 * @example
 * ```ts
 * const fixed = await traceRepair({ attempt, run: () => repairCode({ model, code, error }) });
 * ```
 */
export async function traceRepair<T>({
  attempt,
  run,
}: {
  /** The attempt the repaired code will be. */
  attempt: number;
  /** The repair itself. */
  run: () => Promise<T>;
}): Promise<T> {
  const tracer = activeTracer();
  if (tracer === undefined) return run();
  return inSpan({ tracer, name: SPAN.repair, attributes: { [ATTR.pythonAttempt]: attempt }, run });
}

// `ZeroDivisionError: division by zero` -> `ZeroDivisionError`; `timeout` stays `timeout`.
function errorTypeOf({ status, fingerprint }: { status: string; fingerprint: string }): string {
  if (status !== 'error') return status;
  return /^([A-Za-z_][\w.]*)(?::|$)/.exec(fingerprint)?.[1] ?? 'error';
}

function fingerprintDigest(fingerprint: string): string {
  return sha256Base64Url(`ai-toolbelt-fingerprint:${fingerprint}`).slice(0, 16);
}
