/**
 * Keeps the k largest scores seen so far in a bounded min-heap: O(n log k)
 * over n candidates instead of sorting all n. Ties keep the earlier id
 * (lower slot), so equal scores rank in catalog order.
 *
 * @example
 * ```ts
 * const heap = new TopKHeap(3);
 * for (let i = 0; i < scores.length; i++) heap.push(i, scores[i]);
 * heap.sorted(); // [{ id, score }, ...] best first
 * ```
 */
export class TopKHeap {
  readonly capacity: number;
  private readonly ids: Int32Array;
  private readonly scores: Float64Array;
  private count = 0;

  constructor(capacity: number) {
    this.capacity = Math.max(0, Math.floor(capacity));
    this.ids = new Int32Array(this.capacity);
    this.scores = new Float64Array(this.capacity);
  }

  get size(): number {
    return this.count;
  }

  /** The smallest kept score, or -Infinity while the heap is not full: a cheap pre-check for callers. */
  get threshold(): number {
    return this.count < this.capacity ? -Infinity : (this.scores[0] as number);
  }

  push(id: number, score: number): void {
    if (this.capacity === 0 || Number.isNaN(score)) return;
    if (this.count < this.capacity) {
      this.ids[this.count] = id;
      this.scores[this.count] = score;
      this.siftUp(this.count++);
      return;
    }
    if (!this.worse(0, id, score)) return;
    this.ids[0] = id;
    this.scores[0] = score;
    this.siftDown(0);
  }

  /** The kept entries, best first. */
  sorted(): { id: number; score: number }[] {
    const out: { id: number; score: number }[] = [];
    for (let i = 0; i < this.count; i++) {
      out.push({ id: this.ids[i] as number, score: this.scores[i] as number });
    }
    return out.sort((a, b) => b.score - a.score || a.id - b.id);
  }

  /** Is the entry at heap position `at` worse than (id, score)? */
  private worse(at: number, id: number, score: number): boolean {
    return isWorse(this.scores[at] as number, this.ids[at] as number, score, id);
  }

  private less(a: number, b: number): boolean {
    return this.worse(a, this.ids[b] as number, this.scores[b] as number);
  }

  private swap(a: number, b: number): void {
    const id = this.ids[a] as number;
    const score = this.scores[a] as number;
    this.ids[a] = this.ids[b] as number;
    this.scores[a] = this.scores[b] as number;
    this.ids[b] = id;
    this.scores[b] = score;
  }

  private siftUp(index: number): void {
    let i = index;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(index: number): void {
    let i = index;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < this.count && this.less(left, smallest)) smallest = left;
      if (right < this.count && this.less(right, smallest)) smallest = right;
      if (smallest === i) return;
      this.swap(i, smallest);
      i = smallest;
    }
  }
}

function isWorse(scoreA: number, idA: number, scoreB: number, idB: number): boolean {
  return scoreA < scoreB || (scoreA === scoreB && idA > idB);
}
