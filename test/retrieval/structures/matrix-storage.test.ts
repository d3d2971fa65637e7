import { describe, expect, it } from 'vitest';
import { MatrixStorage } from '../../../src/retrieval/structures/matrix-storage.ts';

const stride = 16;
const codesOf = (row: number) => Int8Array.from({ length: stride }, (_, i) => ((row + i) % 9) - 4);
const query = Float32Array.from({ length: stride }, (_, i) => i / 10 - 0.7);
const dot = (values: ArrayLike<number>, scale: number) =>
  Array.from(values).reduce((sum, value, i) => sum + value * scale * query[i]!, 0);
// int8 rows are stored at unit length.
const unit = (values: ArrayLike<number>) =>
  1 / Math.sqrt(Array.from(values).reduce((sum, value) => sum + value * value, 0));

describe('MatrixStorage', () => {
  it('holds int8 rows as float32 where WebAssembly memory cannot also hold the int8 region', () => {
    // Room for 100 float32 rows and their scratch (7,376 bytes), not for int8 rows beside them.
    const storage = new MatrixStorage({ stride, capacity: 100, maxBytes: 8_000 });
    expect(storage.accelerated).toBe(true);
    for (let row = 0; row < 100; row++) storage.setCodes(row, codesOf(row));
    const scores = storage.scan(query, 100);
    for (let row = 0; row < 100; row++)
      expect(scores[row]).toBeCloseTo(dot(codesOf(row), unit(codesOf(row))), 5);
    expect(storage.row(7, stride)).toEqual(
      Float32Array.from(codesOf(7), code => code * unit(codesOf(7))),
    );
  });

  it('turns its int8 rows into float32 when growing would pass the limit with them', () => {
    // 5,000 float32 rows take 365,072 bytes; with int8 rows beside them, 445,072.
    const storage = new MatrixStorage({ stride, capacity: 10, maxBytes: 400_000 });
    for (let row = 0; row < 10; row++) storage.setCodes(row, codesOf(row));
    storage.setFloats(3, codesOf(30), 1);
    storage.grow(5000); // float32 rows alone still fit, with int8 ones they would not
    expect(storage.capacity).toBe(5000);
    const scores = storage.scan(query, 10);
    for (let row = 0; row < 10; row++) {
      const expected = row === 3 ? dot(codesOf(30), 1) : dot(codesOf(row), unit(codesOf(row)));
      expect(scores[row]).toBeCloseTo(expected, 5);
    }
    expect(() => storage.grow(100_000)).toThrow(RangeError);
  });

  it('store int8 rows at unit length, kernel or not, with the extremes of int8 and a zero row', () => {
    const wide = 1536;
    const rows = [
      Int8Array.from({ length: wide }, (_, i) => (i % 2 === 0 ? -128 : 127)),
      Int8Array.from({ length: wide }, (_, i) => ((i * 37) % 255) - 127),
      new Int8Array(wide),
    ];
    const probe = Float32Array.from({ length: wide }, (_, i) => Math.sin(i));
    const expected = rows.map(codes => {
      const scale = codes.some(code => code !== 0) ? unit(codes) : 0;
      return Array.from(codes).reduce((sum, code, i) => sum + code * scale * probe[i]!, 0);
    });
    for (const accelerate of [true, false]) {
      const storage = new MatrixStorage({ stride: wide, capacity: 3, accelerate });
      rows.forEach((codes, row) => storage.setCodes(row, codes));
      const scores = storage.scan(probe, 3);
      expected.forEach((score, row) => expect(scores[row]).toBeCloseTo(score, 3));
    }
  });
});
