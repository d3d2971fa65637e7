import { describe, expect, it } from 'vitest';
import { errorFingerprint } from '../../src/repair/error-fingerprint.ts';
import { extractCode } from '../../src/repair/extract-code.ts';
import { type FailedRun, decideRepair } from '../../src/repair/repair-policy.ts';
import { trimError } from '../../src/repair/trim-error.ts';

const deepTraceback = [
  'some output printed before the failure',
  'Traceback (most recent call last):',
  ...Array.from({ length: 6 }, (_, i) => [
    `  File "<stdin>", line ${10 + i}, in f${i}`,
    `    f${i + 1}()`,
  ]).flat(),
  '  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads',
  '    return _default_decoder.decode(s)',
  'json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)',
].join('\n');

describe('trimError', () => {
  it('keeps the exception and the innermost frames of a deep traceback', () => {
    const trimmed = trimError(deepTraceback, { maxFrames: 3 });
    expect(trimmed.split('\n')).toEqual([
      'Traceback (most recent call last):',
      '  ... 4 earlier frames omitted ...',
      '  File "<stdin>", line 14, in f4',
      '    f5()',
      '  File "<stdin>", line 15, in f5',
      '    f6()',
      '  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads',
      '    return _default_decoder.decode(s)',
      'json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)',
    ]);
  });

  it('keeps a SyntaxError caret', () => {
    const stderr =
      '  File "<stdin>", line 2\n    print(1\n         ^\nSyntaxError: \'(\' was never closed\n';
    expect(trimError(stderr)).toBe(stderr.trimEnd());
  });

  it('keeps the exception line when over the size limit', () => {
    const trimmed = trimError(deepTraceback, { maxChars: 160 });
    expect(trimmed.length).toBeLessThanOrEqual(160);
    expect(
      trimmed.endsWith('json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)'),
    ).toBe(true);
    const huge = `Traceback (most recent call last):\n  File "<stdin>", line 1, in <module>\nValueError: ${'x'.repeat(5000)}`;
    expect(trimError(huge, { maxChars: 300 })).toMatch(/^ValueError: x+…$/);
  });

  it('keeps the tail of output that is not a traceback', () => {
    const lines = Array.from({ length: 40 }, (_, i) => `warning ${i}`).join('\n');
    expect(trimError(lines).split('\n')).toHaveLength(12);
    expect(trimError('')).toBe('');
  });
});

describe('errorFingerprint', () => {
  it('is the same when only line numbers, addresses, temp paths or numbers change', () => {
    const a =
      'Traceback (most recent call last):\n  File "<stdin>", line 3, in <module>\nIndexError: list index 5 out of range';
    const b =
      'Traceback (most recent call last):\n  File "<stdin>", line 9, in <module>\nIndexError: list index 7 out of range';
    expect(errorFingerprint(a)).toBe(errorFingerprint(b));
    expect(errorFingerprint('TypeError: <object at 0x7f3a2b> is bad')).toBe(
      errorFingerprint('TypeError: <object at 0x10ff> is bad'),
    );
    expect(errorFingerprint("FileNotFoundError: '/tmp/tmpa1b2/x.csv'")).toBe(
      errorFingerprint("FileNotFoundError: '/tmp/tmpzz9/x.csv'"),
    );
    expect(errorFingerprint('  File "<stdin>", line 2\nSyntaxError: invalid syntax')).toBe(
      'SyntaxError: invalid syntax',
    );
  });

  it('differs for different errors', () => {
    expect(errorFingerprint("NameError: name 'x1' is not defined")).not.toBe(
      errorFingerprint("NameError: name 'y' is not defined"),
    );
    expect(errorFingerprint('ValueError: bad')).not.toBe(errorFingerprint('TypeError: bad'));
  });
});

describe('extractCode', () => {
  it('prefers a python block, then any fenced block, then the whole text', () => {
    expect(extractCode('Here:\n```python\nprint(1)\n```\nand ```js\nx\n```')).toBe('print(1)');
    expect(extractCode('```\nprint(2)\n```')).toBe('print(2)');
    expect(extractCode('```py\nprint(3)\n```')).toBe('print(3)');
    expect(extractCode('  print(4)\n')).toBe('print(4)');
  });
});

describe('decideRepair', () => {
  const failure = (over: Partial<FailedRun> = {}): FailedRun => ({
    attempt: 1,
    status: 'error',
    error: 'ValueError: x',
    fingerprint: 'ValueError: x',
    code: 'raise ValueError("x")',
    ...over,
  });

  it('repairs within the budget and halts when it is spent', async () => {
    expect(await decideRepair({ failure: failure({ attempt: 1 }) })).toEqual({
      decision: 'repair',
      reason: 'repairable',
    });
    expect(await decideRepair({ failure: failure({ attempt: 2 }) })).toEqual({
      decision: 'repair',
      reason: 'repairable',
    });
    expect(await decideRepair({ failure: failure({ attempt: 3 }) })).toEqual({
      decision: 'halt',
      reason: 'budget',
    });
    expect(
      await decideRepair({ failure: failure({ attempt: 1 }), policy: { maxRepairs: 0 } }),
    ).toEqual({ decision: 'halt', reason: 'budget' });
  });

  it('halts on a repeated error and on failures that are not worth repairing', async () => {
    expect(
      await decideRepair({
        failure: failure({ attempt: 2 }),
        previousFingerprint: 'ValueError: x',
      }),
    ).toEqual({
      decision: 'halt',
      reason: 'repeated-error',
    });
    for (const status of ['timeout', 'oom', 'output-limit', 'crashed'] as const) {
      expect(await decideRepair({ failure: failure({ status }) })).toEqual({
        decision: 'halt',
        reason: 'not-repairable',
      });
    }
    expect(
      await decideRepair({
        failure: failure({ status: 'timeout' }),
        policy: { repairable: ['error', 'timeout'] },
      }),
    ).toMatchObject({
      decision: 'repair',
    });
  });

  it('lets the onError hook decide, within a hard limit', async () => {
    const seen: FailedRun[] = [];
    const policy = {
      onError: (f: FailedRun) => (
        seen.push(f),
        f.code.includes('retry') ? ('repair' as const) : undefined
      ),
    };
    expect(await decideRepair({ failure: failure({ attempt: 5, code: 'retry' }), policy })).toEqual(
      { decision: 'repair', reason: 'hook' },
    );
    expect(await decideRepair({ failure: failure({ attempt: 5 }), policy })).toEqual({
      decision: 'halt',
      reason: 'budget',
    });
    expect(
      await decideRepair({ failure: failure({ attempt: 10, code: 'retry' }), policy }),
    ).toEqual({ decision: 'halt', reason: 'hard-limit' });
    expect(seen).toHaveLength(2);
    expect(
      await decideRepair({ failure: failure(), policy: { onError: async () => 'halt' as const } }),
    ).toEqual({ decision: 'halt', reason: 'hook' });
  });
});
