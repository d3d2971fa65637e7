/** Options of {@link trimError}. */
export type TrimErrorOptions = {
  /** Longest result, in characters. */
  maxChars?: number;
  /** Traceback frames kept, counted from the innermost. */
  maxFrames?: number;
};

const FRAME = /^\s*File "[^"]*", line \d+/;
const EXCEPTION =
  /^(?:[A-Za-z_][\w.]*)(?:Error|Exception|Exit|Interrupt|Warning|Iteration|Failure)\b.*$|^[A-Za-z_][\w.]*: /;

/**
 * Shortens Python stderr for a repair prompt without losing what a fix needs:
 * the exception line, and the innermost traceback frames (with their source
 * line and a SyntaxError's caret), not merely "the last five lines". Output
 * printed before the traceback is dropped first.
 *
 * @example
 * ```ts
 * trimError(stderr); // 'Traceback (most recent call last):\n  File "<stdin>", line 3, in <module>\n    1/0\nZeroDivisionError: division by zero'
 * ```
 */
export function trimError(
  stderr: string,
  { maxChars = 1_500, maxFrames = 3 }: TrimErrorOptions = {},
): string {
  const lines = stderr.replace(/\r\n?/g, '\n').replace(/\s+$/, '').split('\n');
  const start = lines.findLastIndex(line => line.startsWith('Traceback (most recent call last):'));
  const frameStarts: number[] = [];
  for (let i = Math.max(0, start); i < lines.length; i++)
    if (FRAME.test(lines[i] as string)) frameStarts.push(i);

  let kept: string[];
  if (frameStarts.length === 0) {
    kept = lines.slice(-12); // not a traceback: the tail is what matters
  } else {
    const firstKept = frameStarts[Math.max(0, frameStarts.length - maxFrames)] as number;
    const skipped = frameStarts.filter(i => i < firstKept).length;
    kept = [
      ...(start >= 0 ? ['Traceback (most recent call last):'] : []),
      ...(skipped > 0
        ? [`  ... ${skipped} earlier frame${skipped === 1 ? '' : 's'} omitted ...`]
        : []),
      ...lines.slice(firstKept),
    ];
  }
  const text = kept.join('\n');
  if (text.length <= maxChars) return text;
  // Over budget: the exception line wins, then as much of the frames as fits before it.
  const exceptionAt = kept.findLastIndex(line => EXCEPTION.test(line));
  const tail = exceptionAt >= 0 ? kept.slice(exceptionAt).join('\n') : (kept.at(-1) as string);
  if (tail.length >= maxChars) return `${tail.slice(0, maxChars - 1)}…`;
  const head = kept.slice(0, exceptionAt >= 0 ? exceptionAt : -1).join('\n');
  const room = maxChars - tail.length - 5;
  return `…${head.slice(head.length - room)}\n${tail}`;
}
