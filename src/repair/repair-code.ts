import { type LanguageModel, generateText } from 'ai';
import { extractCode } from './extract-code.ts';

const SYSTEM =
  'You fix Python programs. Reply with the corrected program only, in one ```python block. ' +
  'Keep what the program is meant to do; change only what the error requires.';

/**
 * Asks a model for a fixed version of failing code (a short prompt: code
 * and error in, code block out) and extracts the code from its answer.
 *
 * @example
 * ```ts
 * const fixed = await repairCode({ model: openai('gpt-4.1-mini'), code, error: trimError(stderr) });
 * ```
 */
export async function repairCode({
  model,
  code,
  error,
  abortSignal,
  maxRetries = 2,
}: {
  /** The repair model. */
  model: LanguageModel;
  /** The code that failed. */
  code: string;
  /** The trimmed error. */
  error: string;
  /** Cancels the request. */
  abortSignal?: AbortSignal;
  /** Retries of the model call on provider errors. */
  maxRetries?: number;
}): Promise<string> {
  const { text } = await generateText({
    model,
    system: SYSTEM,
    prompt: `Repair this Python code and return only code.\n${code}\nError:\n${error}`,
    maxRetries,
    ...(abortSignal ? { abortSignal } : {}),
  });
  return extractCode(text);
}
