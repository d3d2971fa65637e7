/**
 * A fingerprint of a Python error that stays the same when only incidental
 * details change: the exception type and message, with line numbers, memory
 * addresses, temporary paths and numbers masked. Two attempts failing with
 * the same fingerprint mean the repair is going in circles.
 *
 * @example
 * ```ts
 * errorFingerprint('  File "<stdin>", line 3\nZeroDivisionError: division by zero');
 * // 'ZeroDivisionError: division by zero'
 * ```
 */
export function errorFingerprint(stderr: string): string {
  const lines = stderr.replace(/\r\n?/g, '\n').trim().split('\n');
  // The exception line is the last line that starts at column 0 and is not a frame.
  const exception =
    lines.findLast(line => /^[A-Za-z_][\w.]*(?::|$)/.test(line) && !line.startsWith('Traceback')) ??
    lines.at(-1) ??
    '';
  return exception
    .replace(/0x[0-9a-fA-F]+/g, '0x…')
    .replace(/(?:\/tmp|\/var\/folders|\/private\/var)\/[^\s'",)]*/g, '<tmp>')
    .replace(/line \d+/g, 'line N')
    .replace(/(?<![\w.])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w])/gi, 'N')
    .replace(/\s+/g, ' ')
    .trim();
}
