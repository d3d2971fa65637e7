// Select latency of the vector index (query vector given) at 1k / 10k / 100k
// tools, d = 1536, against, in the same run: the seed's Python algorithm, a
// naive JS baseline (ai's cosineSimilarity over every tool, then sort), and a
// bare scan of the same matrix (the memory-bandwidth floor); and the same vectors held as int8
// rows, as a warm start holds a snapshot's. One JSON line per N.
// Usage: node bench/retrieval.ts [--sizes 1000,10000,100000] [--queries 50]
// (writes bench/results/retrieval.json)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cosineSimilarity } from 'ai';
import { VectorIndex } from '../src/retrieval/dense/vector-index.ts';
import { benchResults } from './bench-results.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,10000,100000' },
    queries: { type: 'string', default: '50' },
  },
});
const sizes = values.sizes.split(',').map(Number);
const queryCount = Number(values.queries);
const DIM = 1536;
const TOP_K = 10;
const SEED_SIZES = new Set([1000, 10000]);
const results = benchResults({ name: 'retrieval', command: 'npm run bench:retrieval' });

function randomMatrix(rows: number, seed: number): Float32Array {
  let s = seed >>> 0;
  const out = new Float32Array(rows * DIM);
  for (let i = 0; i < out.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 31 - 1;
  }
  return out;
}

// As a catalog snapshot stores a vector: int8 codes, the largest magnitude as 127.
function quantize(matrix: Float32Array, rows: number): Int8Array {
  const codes = new Int8Array(rows * DIM);
  for (let r = 0; r < rows; r++) {
    let largest = 0;
    for (let i = r * DIM; i < (r + 1) * DIM; i++) largest = Math.max(largest, Math.abs(matrix[i]!));
    const scale = largest === 0 ? 0 : 127 / largest;
    for (let i = r * DIM; i < (r + 1) * DIM; i++) codes[i] = Math.round(matrix[i]! * scale);
  }
  return codes;
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

const round = (x: number): number => Math.round(x * 1000) / 1000;

function time(fn: () => void): number {
  const started = performance.now();
  fn();
  return performance.now() - started;
}

function scanFloor(
  matrix: Float32Array,
  rows: number,
  query: Float32Array,
  scores: Float32Array,
): void {
  for (let r = 0, o = 0; r < rows; r++, o += DIM) {
    let s = 0;
    for (let i = 0; i < DIM; i++) s += (matrix[o + i] as number) * (query[i] as number);
    scores[r] = s;
  }
}

function seedMs(matrix: Float32Array, rows: number, queries: Float32Array, count: number): number {
  const dir = mkdtempSync(join(tmpdir(), 'toolbelt-bench-'));
  try {
    writeFileSync(join(dir, 'v.f32'), matrix);
    writeFileSync(join(dir, 'q.f32'), queries.subarray(0, count * DIM));
    const out = execFileSync(
      'python3',
      [
        join(import.meta.dirname, 'seed-retrieve.py'),
        join(dir, 'v.f32'),
        String(rows),
        String(DIM),
        join(dir, 'q.f32'),
        String(count),
        String(TOP_K),
      ],
      { encoding: 'utf8', maxBuffer: 1 << 20 },
    );
    return percentile(JSON.parse(out) as number[], 50);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const rows of sizes) {
  const matrix = randomMatrix(rows, rows);
  const queries = randomMatrix(queryCount, 7);
  const query = (q: number): Float32Array => queries.subarray(q * DIM, (q + 1) * DIM);

  const before = process.memoryUsage().arrayBuffers;
  const index = new VectorIndex({ dimensions: DIM, initialCapacity: rows });
  for (let r = 0; r < rows; r++) index.set(r, matrix.subarray(r * DIM, (r + 1) * DIM));
  const indexBytes = process.memoryUsage().arrayBuffers - before;

  for (let q = 0; q < 5; q++) index.search(query(q), TOP_K); // warm-up
  const samples = Array.from({ length: queryCount }, (_, q) =>
    time(() => index.search(query(q), TOP_K)),
  );

  const scores = new Float32Array(rows);
  for (let q = 0; q < 5; q++) scanFloor(matrix, rows, query(q), scores);
  const scan = Array.from({ length: queryCount }, (_, q) =>
    time(() => scanFloor(matrix, rows, query(q), scores)),
  );

  // The naive baseline works on number[] as ai's cosineSimilarity expects; a
  // few queries suffice at 100k, where it takes seconds per query.
  const naiveQueries = rows >= 100_000 ? 3 : 10;
  const arrays = Array.from({ length: rows }, (_, r) =>
    Array.from(matrix.subarray(r * DIM, (r + 1) * DIM)),
  );
  const naive = Array.from({ length: naiveQueries }, (_, q) => {
    const qv = Array.from(query(q));
    return time(() => {
      arrays
        .map((v, i) => ({ i, s: cosineSimilarity(v, qv) }))
        .sort((a, b) => b.s - a.s)
        .slice(0, TOP_K);
    });
  });
  arrays.length = 0;

  // The same vectors as a warm start holds them: int8 codes read from a snapshot, kept as int8.
  const codes = quantize(matrix, rows);
  const rssBefore = process.memoryUsage().rss;
  const int8 = new VectorIndex({ dimensions: DIM, initialCapacity: rows });
  for (let r = 0; r < rows; r++)
    int8.set(r, codes.subarray(r * DIM, (r + 1) * DIM), { approximate: true });
  const int8Bytes = process.memoryUsage().rss - rssBefore;
  for (let q = 0; q < 5; q++) int8.search(query(q), TOP_K); // warm-up
  const int8Samples = Array.from({ length: queryCount }, (_, q) =>
    time(() => int8.search(query(q), TOP_K)),
  );

  const seed = SEED_SIZES.has(rows) ? seedMs(matrix, rows, queries, rows >= 10_000 ? 3 : 10) : null;
  const p50 = percentile(samples, 50);
  const bytesPerTool = Math.max(index.byteLength, indexBytes) / rows;
  results.row({
    tools: rows,
    dim: DIM,
    p50Ms: round(p50),
    p99Ms: round(percentile(samples, 99)),
    seedMs: seed === null ? null : round(seed),
    naiveMs: round(percentile(naive, 50)),
    scanMs: round(percentile(scan, 50)),
    bytesPerTool: Math.round(bytesPerTool),
    seedSpeedup: seed === null ? null : round(seed / p50),
    naiveSpeedup: round(percentile(naive, 50) / p50),
    vsScanFloor: round(p50 / percentile(scan, 50)),
    memoryVsRawVectors: round(bytesPerTool / (DIM * 4)),
    // int8 rows (a warm start's, from a snapshot): search time, and the memory they took (the
    // process's resident bytes; the float32 rows' address space is reserved but never touched).
    int8P50Ms: round(percentile(int8Samples, 50)),
    int8ResidentBytesPerTool: Math.round(int8Bytes / rows),
  });
}
await results.save();
