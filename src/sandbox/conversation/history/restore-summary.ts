import type { InterpreterRestore } from '../../types.ts';

/** Failed cells named one by one in the summary; the rest are counted. */
const NAMED_FAILURES = 3;
/** The summary goes to the model on every restore: it stays short whatever the history. */
const MAX_SUMMARY_CHARS = 1_000;

/**
 * The one line the model reads about a restore: what was re-run, what failed or is missing,
 * and, when a kept cell ended the new interpreter, what became of the history: kept for the
 * next cell to try again (`retry`: this cell did not run), or given up after a second such
 * restore (`given-up`: the interpreter starts empty). At most 1,000 characters.
 *
 * @example
 * ```ts
 * const summary = restoreSummary({ restore, kept: 4, outcome: 'restored', idleMs: 600_000 });
 * ```
 */
export function restoreSummary({
  restore,
  kept,
  outcome,
  idleMs,
}: {
  restore: InterpreterRestore;
  /** Cells there were to re-run. */
  kept: number;
  /** What became of the history. */
  outcome: 'restored' | 'retry' | 'given-up';
  /** Idle expiry, for the reason. */
  idleMs: number;
}): string {
  const why =
    restore.reason === 'idle'
      ? `it had been idle for ${Math.round(idleMs / 60_000)} minutes`
      : restore.reason === 'engine'
        ? 'its sandbox host was unreachable'
        : 'it had stopped';
  if (outcome !== 'restored') {
    const cell = restore.failed.at(-1);
    const stopped =
      `The Python interpreter was replaced (${why}) and its state could not be restored: re-running ` +
      `earlier cell ${cell?.cell ?? '?'} stopped it again (${cell?.status ?? 'crashed'}: ${cell?.error ?? ''}).`;
    return cap(
      outcome === 'retry'
        ? `${stopped} This cell did not run. The earlier cells are kept: the next cell tries the restore again.`
        : `${stopped} It happened twice, so the earlier cells were given up: the interpreter starts empty ` +
            '(variables, imports and files from earlier cells are gone; input files the app sends again are placed).',
    );
  }
  const parts = [
    kept === 0
      ? `The Python interpreter was replaced (${why}); no earlier cell was kept to re-run`
      : `Python state restored by re-running ${restore.cells === kept ? '' : `${restore.cells} of `}${plural(kept, 'earlier cell')} (${why})`,
  ];
  for (const { cell, status, error } of restore.failed.slice(0, NAMED_FAILURES)) {
    const line = error.length > 120 ? `${error.slice(0, 119)}…` : error;
    parts.push(
      `cell ${cell} failed when re-run (${status}: ${line}), so what it defined is missing`,
    );
  }
  const unnamed = restore.failed.length - NAMED_FAILURES;
  if (unnamed > 0) parts.push(`${plural(unnamed, 'more cell')} failed when re-run`);
  if (restore.notRerun > 0) {
    parts.push(
      `${plural(restore.notRerun, 'later cell')} ${restore.notRerun === 1 ? 'was' : 'were'} not re-run (the restore's time limit), so what ${restore.notRerun === 1 ? 'it' : 'they'} defined is missing`,
    );
  }
  if (restore.dropped > 0) {
    parts.push(
      `${plural(restore.dropped, 'older cell')} ${restore.dropped === 1 ? 'was' : 'were'} not kept, so what ${restore.dropped === 1 ? 'it' : 'they'} defined is missing`,
    );
  }
  if (restore.missingFiles.length > 0) {
    parts.push(`input files not restored: ${restore.missingFiles.join(', ')}`);
  }
  // Said last, so a long list above is what the cap cuts, not this.
  const differs =
    restore.cells > 0
      ? ' Random draws repeat (random and NumPy are seeded per conversation); the clock, ' +
        'os.urandom, uuid4 and anything read from outside may differ.'
      : '';
  return `${cap(`${parts.join('; ')}.`, MAX_SUMMARY_CHARS - differs.length)}${differs}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function cap(text: string, max = MAX_SUMMARY_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
