import { describe, expect, it } from 'vitest';
import { MAX_RUN_NOTES, RecordBudget } from '../../../src/sandbox/output/record-budget.ts';

describe('RecordBudget', () => {
  it('admits records up to each cap, then refuses everything', () => {
    const budget = new RecordBudget({ images: 1, files: 2, bytes: 10 });
    expect(budget.caps).toEqual({
      images: 1,
      files: 2,
      bytes: 10,
      notes: MAX_RUN_NOTES,
      records: 23,
    });
    expect(budget.admit({ kind: 'image', bytes: 4 })).toBe(true);
    expect(budget.admit({ kind: 'file', bytes: 6 })).toBe(true);
    expect(budget.exceeded).toBeUndefined();
    expect(budget.note()).toBeUndefined();
    expect(budget.admit({ kind: 'file', bytes: 1 })).toBe(false);
    expect(budget.exceeded).toBe('bytes');
    // Once over, nothing more fits, not even what would have.
    expect(budget.admit({ kind: 'note' })).toBe(false);
    expect(budget.note()).toBe(
      'the run was stopped: it returned more than 10 bytes of images and files (maxArtifactBytes)',
    );
  });

  it('counts a refused record nowhere, and malformed records towards the total', () => {
    const budget = new RecordBudget({ images: 0, files: 0, bytes: 0, notes: 0, records: 2 });
    expect(budget.admit({ kind: 'malformed' })).toBe(true);
    expect(budget.admit({ kind: 'malformed' })).toBe(true);
    expect(budget.admit({ kind: 'malformed' })).toBe(false);
    expect(budget.exceeded).toBe('records');
    const images = new RecordBudget({ images: 0, files: 5, bytes: 100 });
    expect(images.admit({ kind: 'image', bytes: 0 })).toBe(false);
    expect(images.exceeded).toBe('images');
  });
});
