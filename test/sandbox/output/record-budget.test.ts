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
      results: 0,
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

  it('counts shown values against results and bytes, and chart data against bytes', () => {
    const budget = new RecordBudget({ images: 1, files: 0, bytes: 100, results: 2 });
    // A record slot for each result, and one for the chart of each image.
    expect(budget.caps.records).toBe(1 + 0 + MAX_RUN_NOTES + 2 + 1);
    expect(budget.admit({ kind: 'result', bytes: 40 })).toBe(true);
    expect(budget.admit({ kind: 'chart', bytes: 40 })).toBe(true);
    expect(budget.admit({ kind: 'result', bytes: 40 })).toBe(false);
    expect(budget.exceeded).toBe('bytes');
    const count = new RecordBudget({ images: 0, files: 0, bytes: 1_000, results: 1 });
    expect(count.admit({ kind: 'result', bytes: 1 })).toBe(true);
    expect(count.admit({ kind: 'result', bytes: 1 })).toBe(false);
    expect(count.note()).toContain('more than 1 shown values (maxResults)');
  });
});
