// lexical/: the lexical channel: the tokeniser (words, stems, stop words), term counts and the
// BM25F index.
import { PostingList } from '../structures/posting-list.ts';
import { FIELD_COUNT, type TermCounts, USAGE_FIELD as USAGE } from './term-counts.ts';
import { FIELD_NAMES, type FieldName, type ToolFields } from '../tool-fields.ts';
import { tokenize } from './tokenize.ts';
import { TopKHeap } from '../structures/top-k-heap.ts';

/** Weight and length normalisation of one field in BM25F. */
export type FieldWeight = { weight: number; b: number };

/** BM25F parameters: term saturation `k1` and per-field weight / length normalisation. */
export type Bm25fOptions = {
  /** Term-frequency saturation; 1.2 is the textbook value. */
  k1?: number;
  /** Per-field weight and `b` (0 = no length normalisation, 1 = full). */
  fields?: Partial<Record<FieldName, FieldWeight>>;
};

/**
 * Defaults follow the usual BM25F reasoning rather than any one data set: the
 * name is the most deliberate text of a tool (short, so little length
 * normalisation), the description is its main prose, parameter text is
 * supporting evidence, and the server name says which product a tool acts on.
 */
export const DEFAULT_FIELD_WEIGHTS: Readonly<Record<FieldName, FieldWeight>> = {
  name: { weight: 3, b: 0.5 },
  server: { weight: 1, b: 0.3 },
  description: { weight: 1, b: 0.75 },
  parameterNames: { weight: 0.5, b: 0.75 },
  parameterDescriptions: { weight: 0.3, b: 0.75 },
  // The users' own words for the tool (learning from use): prose like the description.
  usage: { weight: 1, b: 0.75 },
};

/** A tool's tokens per field (in `FIELD_NAMES` order), from {@link LexicalIndex.analyze}. */
export type AnalyzedFields = { readonly tokens: readonly (readonly string[])[] };

/** Per-term weights of a query, e.g. from {@link LexicalIndex.queryTerms}. */
export type TermWeights = Map<string, number>;

/** Which fields a search scores: all, the tool's own text (no learned usage), or usage alone. */
export type ScoredFields = 'all' | 'text' | 'usage';

/**
 * A tool's terms, per term its frequency in each field (`FIELD_COUNT` per term), and per term the
 * index of the tool's pair in that term's posting list (to remove it).
 */
type Doc = { terms: string[]; tf: Float32Array; lengths: Float32Array; at: Int32Array };

/**
 * An in-memory BM25F inverted index over tool fields with incremental
 * add and remove. Slots are small integers the caller owns, so the lexical
 * and dense indexes can share them.
 */
export class LexicalIndex {
  private readonly k1: number;
  private readonly weights: Float64Array;
  private readonly bs: Float64Array;
  // term -> (slot, the term's position in that slot's Doc) pairs. No object per (term, tool)
  // pair keeps a large catalog's heap small, and with it the collections every start pays for.
  private readonly postings = new Map<string, PostingList>();
  // By slot: an array, as the search reads one per posting entry.
  private readonly docs: (Doc | undefined)[] = [];
  private count = 0;
  private readonly totalLengths = new Float64Array(FIELD_COUNT);
  // Tools with learned usage: the usage field's average length is taken over them
  // only, or the first learned tool would be judged against a catalog of empty fields.
  private usageDocs = 0;
  // Counts `set` calls, for the posting lists' scratch (see `set`).
  private stamp = 0;
  // A removal moved another tool's pair within a posting list: that tool's Doc follows it.
  private readonly moved = (slot: number, position: number, index: number): void => {
    (this.docs[slot] as Doc).at[position] = index;
  };

  constructor({ k1 = 1.2, fields = {} }: Bm25fOptions = {}) {
    this.k1 = k1;
    this.weights = new Float64Array(FIELD_COUNT);
    this.bs = new Float64Array(FIELD_COUNT);
    FIELD_NAMES.forEach((field, i) => {
      const { weight, b } = fields[field] ?? DEFAULT_FIELD_WEIGHTS[field];
      this.weights[i] = weight;
      this.bs[i] = b;
    });
  }

  get size(): number {
    return this.count;
  }

  /**
   * Tokenises a tool's fields: the slow, pure half of {@link set}, which
   * callers can run ahead (e.g. while embeddings load) without touching the index.
   */
  analyze(fields: ToolFields): AnalyzedFields {
    return { tokens: FIELD_NAMES.map(field => tokenize(fields[field])) };
  }

  /**
   * Indexes (or re-indexes) the tool in `slot`, from its fields, their {@link analyze} result, or
   * its term counts (a snapshot's, which the index then keeps as they are).
   */
  set(slot: number, fields: ToolFields | AnalyzedFields | TermCounts): void {
    if ('terms' in fields) {
      this.delete(slot);
      this.add(slot, fields.terms as string[], fields.tf, fields.lengths);
      return;
    }
    const { tokens: perField } = 'tokens' in fields ? fields : this.analyze(fields);
    this.delete(slot);
    // The tool's distinct terms, found through their posting lists, which remember the last
    // call that met them: no map per tool (a 3,000-tool upsert allocated megabytes of them, and
    // fresh memory is what a start pays for).
    const stamp = ++this.stamp;
    const terms: string[] = [];
    for (const tokens of perField) {
      for (const token of tokens) {
        let list = this.postings.get(token);
        if (list === undefined) this.postings.set(token, (list = new PostingList()));
        if (list.stamp === stamp) continue;
        list.stamp = stamp;
        list.scratch = terms.length;
        terms.push(token);
      }
    }
    const tf = new Float32Array(terms.length * FIELD_COUNT);
    const lengths = new Float32Array(FIELD_COUNT);
    perField.forEach((tokens, f) => {
      lengths[f] = tokens.length;
      for (const token of tokens) {
        const at = (this.postings.get(token) as PostingList).scratch * FIELD_COUNT + f;
        tf[at] = (tf[at] as number) + 1;
      }
    });
    this.add(slot, terms, tf, lengths);
  }

  /**
   * Replaces the usage field of the tool in `slot` with learned terms: each
   * term's weight (its share of the learned requests) and the field's length.
   * Returns false when the slot holds no tool.
   */
  setUsage(slot: number, terms: ReadonlyMap<string, number>, length: number): boolean {
    const before = this.docs[slot];
    if (before === undefined) return false;
    // The other fields' counts, without usage; a term only usage had goes.
    const counts = new Map<string, Float32Array>();
    before.terms.forEach((term, i) => {
      const row = before.tf.slice(i * FIELD_COUNT, (i + 1) * FIELD_COUNT);
      row[USAGE] = 0;
      if (row.some(count => count !== 0)) counts.set(term, row);
    });
    for (const [term, weight] of terms) {
      let row = counts.get(term);
      if (row === undefined) counts.set(term, (row = new Float32Array(FIELD_COUNT)));
      row[USAGE] = weight;
    }
    const tf = new Float32Array(counts.size * FIELD_COUNT);
    [...counts.values()].forEach((row, i) => tf.set(row, i * FIELD_COUNT));
    const lengths = before.lengths.slice();
    lengths[USAGE] = length;
    this.delete(slot);
    this.add(slot, [...counts.keys()], tf, lengths);
    return true;
  }

  /** What the index holds for the tool in `slot` (its own text and any learned usage). */
  termCounts(slot: number): TermCounts | undefined {
    const doc = this.docs[slot];
    return doc && { terms: doc.terms, tf: doc.tf, lengths: doc.lengths };
  }

  delete(slot: number): boolean {
    const doc = this.docs[slot];
    if (doc === undefined) return false;
    doc.terms.forEach((term, i) => {
      const posting = this.postings.get(term) as PostingList;
      posting.removeAt(doc.at[i] as number, this.moved);
      if (posting.size === 0) this.postings.delete(term);
    });
    for (let f = 0; f < FIELD_COUNT; f++) {
      this.totalLengths[f] = (this.totalLengths[f] as number) - (doc.lengths[f] as number);
    }
    if ((doc.lengths[USAGE] as number) > 0) this.usageDocs--;
    this.docs[slot] = undefined;
    this.count--;
    return true;
  }

  private add(slot: number, terms: string[], tf: Float32Array, lengths: Float32Array): void {
    const doc: Doc = { terms, tf, lengths, at: new Int32Array(terms.length) };
    terms.forEach((term, i) => {
      let posting = this.postings.get(term);
      if (posting === undefined) this.postings.set(term, (posting = new PostingList()));
      doc.at[i] = posting.add(slot, i);
    });
    for (let f = 0; f < FIELD_COUNT; f++) {
      this.totalLengths[f] = (this.totalLengths[f] as number) + (doc.lengths[f] as number);
    }
    if ((doc.lengths[USAGE] as number) > 0) this.usageDocs++;
    this.docs[slot] = doc;
    this.count++;
  }

  /** The query's terms with their IDF; terms unknown to the catalog are dropped. */
  queryTerms(query: string): TermWeights {
    const weights: TermWeights = new Map();
    const n = this.size;
    for (const term of tokenize(query)) {
      const df = this.postings.get(term)?.size ?? 0;
      if (df === 0 || weights.has(term)) continue;
      weights.set(term, Math.log(1 + (n - df + 0.5) / (df + 0.5)));
    }
    return weights;
  }

  /**
   * BM25F score of every matching slot, per query term: `contributions.get(term)`
   * maps slot -> that term's share of the score. Callers that only need the sum
   * use {@link search}. `fields` leaves the others out (a tool matching only there is left out).
   */
  contributions(
    terms: TermWeights,
    fields: ScoredFields = 'all',
  ): Map<string, Map<number, number>> {
    const out = new Map<string, Map<number, number>>();
    const averages = this.averageLengths();
    const weights = this.fieldWeights(fields);
    for (const [term, idf] of terms) {
      const posting = this.postings.get(term);
      if (posting === undefined) continue;
      const scores = new Map<number, number>();
      for (let j = 0; j < posting.size; j++) {
        const slot = posting.slotAt(j);
        const { tf, lengths } = this.docs[slot] as Doc;
        const at = posting.positionAt(j) * FIELD_COUNT;
        let weighted = 0;
        for (let f = 0; f < FIELD_COUNT; f++) {
          const count = tf[at + f] as number;
          if (count === 0) continue;
          const b = this.bs[f] as number;
          const norm = 1 - b + (b * (lengths[f] as number)) / (averages[f] as number);
          weighted += ((weights[f] as number) * count) / norm;
        }
        if (weighted === 0 && fields !== 'all') continue;
        scores.set(slot, (idf * weighted) / (this.k1 + weighted));
      }
      out.set(term, scores);
    }
    return out;
  }

  /**
   * The score of a tool that holds each of the query's terms once in its heaviest field (its
   * name, by default), at that field's average length: a full match, the scale on which a
   * score says how much of the query a tool matches (in `fields`' heaviest).
   */
  fullMatchScore(query: string | TermWeights, fields: ScoredFields = 'all'): number {
    const terms = typeof query === 'string' ? this.queryTerms(query) : query;
    const heaviest = Math.max(...this.fieldWeights(fields));
    let idfs = 0;
    for (const idf of terms.values()) idfs += idf;
    return (idfs * heaviest) / (this.k1 + heaviest);
  }

  /** Top-k slots for a query; `accept` filters slots before ranking; `fields` as in `contributions`. */
  search(
    query: string | TermWeights,
    topK: number,
    accept?: (slot: number) => boolean,
    fields: ScoredFields = 'all',
  ): { slot: number; score: number }[] {
    const terms = typeof query === 'string' ? this.queryTerms(query) : query;
    const totals = new Map<number, number>();
    for (const scores of this.contributions(terms, fields).values()) {
      for (const [slot, score] of scores) totals.set(slot, (totals.get(slot) ?? 0) + score);
    }
    const heap = new TopKHeap(topK);
    for (const [slot, score] of totals) {
      if (score >= heap.threshold && (accept === undefined || accept(slot))) heap.push(slot, score);
    }
    return heap.sorted().map(({ id, score }) => ({ slot: id, score }));
  }

  // The field weights with those `fields` leaves out at 0.
  private fieldWeights(fields: ScoredFields): Float64Array {
    if (fields === 'all') return this.weights;
    return this.weights.map((weight, f) => ((f === USAGE) === (fields === 'usage') ? weight : 0));
  }

  private averageLengths(): Float64Array {
    const averages = new Float64Array(FIELD_COUNT);
    const n = Math.max(1, this.size);
    for (let f = 0; f < FIELD_COUNT; f++) {
      // An all-empty field must not divide by zero; its tf is 0 anyway.
      const docs = f === USAGE ? Math.max(1, this.usageDocs) : n;
      averages[f] = Math.max((this.totalLengths[f] as number) / docs, 1e-9);
    }
    return averages;
  }
}
