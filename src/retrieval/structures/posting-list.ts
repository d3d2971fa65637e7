/**
 * The tools that hold one term: (slot, position of the term in that slot's document) pairs,
 * packed in one growable `Int32Array`. A catalog has one list per distinct term and one pair per
 * (term, tool), so pairs cost 8 bytes and no object of their own: a 10,000-tool index allocates
 * a fraction of what a map per term does, and a search walks plain memory. Removal moves the last
 * pair into the hole, so the order is insertion order only until a removal.
 *
 * @example
 * ```ts
 * const list = new PostingList();
 * const index = list.add(7, 0); // tool in slot 7, its first term
 * list.removeAt(index, (slot, position, to) => docs[slot].at[position] = to);
 * ```
 */
export class PostingList {
  private pairs = new Int32Array(4);
  private count = 0;
  /** Scratch of the index that owns the list: the last `set` that met the term. */
  stamp = 0;
  /** Scratch: the term's position in the tool of that `set`. */
  scratch = 0;

  /** Pairs in the list (the term's document frequency). */
  get size(): number {
    return this.count;
  }

  /** The slot of pair `index`. */
  slotAt(index: number): number {
    return this.pairs[2 * index] as number;
  }

  /** The term's position in the document of pair `index`. */
  positionAt(index: number): number {
    return this.pairs[2 * index + 1] as number;
  }

  /** Appends a pair; returns its index. */
  add(slot: number, position: number): number {
    if (2 * this.count === this.pairs.length) {
      const grown = new Int32Array(this.pairs.length * 2);
      grown.set(this.pairs);
      this.pairs = grown;
    }
    this.pairs[2 * this.count] = slot;
    this.pairs[2 * this.count + 1] = position;
    return this.count++;
  }

  /**
   * Removes pair `index`: the last pair takes its place, and `moved` learns that pair's new
   * index (callers keep each pair's index to remove it later).
   */
  removeAt(index: number, moved: (slot: number, position: number, index: number) => void): void {
    const last = --this.count;
    if (index === last) return;
    const slot = this.pairs[2 * last] as number;
    const position = this.pairs[2 * last + 1] as number;
    this.pairs[2 * index] = slot;
    this.pairs[2 * index + 1] = position;
    moved(slot, position, index);
  }
}
