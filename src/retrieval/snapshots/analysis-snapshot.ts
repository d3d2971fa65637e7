import { base64ByteLength, decodeBase64Into, encodeBase64 } from '../../util/base64.ts';
import { sha256Base64Url } from '../../util/sha256.ts';
import { STOP_WORDS } from '../lexical/stop-words.ts';
import { FIELD_COUNT, type TermCounts } from '../lexical/term-counts.ts';
import { FIELD_NAMES } from '../tool-fields.ts';
import { tokenize } from '../lexical/tokenize.ts';

/**
 * A whole catalog's lexical analysis (each tool's term counts, see `TermCounts`) in a store, so
 * a warm start does not tokenise an unchanged catalog again. Identified like the vector snapshot
 * (`snapshotCatalog` of the tools' content hashes) and by the tokeniser's fingerprint, in chunks
 * of `ANALYSIS_CHUNK_ROWS` tools, each self-contained: `aitb-lex1|<catalog hash>|<fingerprint>|
 * <rows>|<total rows>|<chunk>|` then the payload, raw bytes where the store keeps them (Redis)
 * or base64 text. The payload (little-endian) is four u32 (rows, dictionary terms, dictionary
 * bytes, term entries), then u32 per row its term count, u32 per row and stored field its
 * length, u32 per entry its dictionary term, the dictionary (UTF-8, terms joined by '\n'), and
 * u8 per entry and stored field its count. Stored fields are the tool's own text: every field
 * but learned usage.
 */
export type AnalysisChunk = string | Uint8Array;

/** Tools per store value: 1,024 tools of a typical catalog are about 250 KB. */
export const ANALYSIS_CHUNK_ROWS = 1024;

const FORMAT = 'aitb-lex1';
// Bumped whenever `toolFields`, `visitWords` or `tokenize` change what they make of a tool in a
// way the fingerprint's probe would not show.
const ANALYZER_VERSION = 1;
// Every field but learned usage, which comes last (`FIELD_NAMES`; the tests hold it there).
const STORED = FIELD_COUNT - 1;
const MAX_COUNT = 255;
const HEAD = 16;
const PROBE =
  'getHTTPResponse_v2 GitHub createPullRequests the forecasts were running happily 12345 x ' +
  'relational caresses ponies Ünïcödé naïve café';

let fingerprint: string | undefined;

/**
 * Names the analyser: a snapshot made by another version of it (fields, stop words, stemmer,
 * splitting) has another fingerprint and is not read.
 *
 * @example
 * ```ts
 * const key = `analysis:${analyzerFingerprint()}:${catalog.hash}:0`;
 * ```
 */
export function analyzerFingerprint(): string {
  fingerprint ??= sha256Base64Url(
    [
      ANALYZER_VERSION,
      FIELD_NAMES.join(','),
      [...STOP_WORDS].join(' '),
      tokenize(PROBE).join(' '),
    ].join('\n'),
  ).slice(0, 22);
  return fingerprint;
}

/**
 * Encodes the term counts of a catalog's tools (in `snapshotCatalog` order) as its chunks, as
 * bytes (`bytes: true`) or base64 text; undefined when one cannot be kept (a count over 255).
 */
export function encodeAnalysis({
  hash,
  rows,
  bytes: asBytes,
}: {
  /** The catalog's hash (`snapshotCatalog`), checked on read. */
  hash: string;
  /** Each tool's own text (learned usage is not stored). */
  rows: readonly TermCounts[];
  /** Raw payloads for stores that keep bytes. */
  bytes: boolean;
}): AnalysisChunk[] | undefined {
  const chunks: AnalysisChunk[] = [];
  for (let first = 0; first < rows.length; first += ANALYSIS_CHUNK_ROWS) {
    const part = rows.slice(first, first + ANALYSIS_CHUNK_ROWS);
    const payload = encodePayload(part);
    if (payload === undefined) return undefined;
    const chunk = first / ANALYSIS_CHUNK_ROWS;
    const header = `${FORMAT}|${hash}|${analyzerFingerprint()}|${part.length}|${rows.length}|${chunk}|`;
    if (!asBytes) chunks.push(`${header}${encodeBase64(payload)}`);
    else {
      const value = new Uint8Array(header.length + payload.length);
      value.set(utf8.encode(header));
      value.set(payload, header.length);
      chunks.push(value);
    }
  }
  return chunks;
}

function encodePayload(rows: readonly TermCounts[]): Uint8Array | undefined {
  const ids = new Map<string, number>();
  let entries = 0;
  for (const { terms } of rows) {
    entries += terms.length;
    for (const term of terms) if (!ids.has(term)) ids.set(term, ids.size);
  }
  const dictionary = utf8.encode([...ids.keys()].join('\n'));
  const words = 4 + rows.length * (1 + STORED) + entries;
  const bytes = new Uint8Array(words * 4 + dictionary.length + entries * STORED);
  const u32 = new Uint32Array(bytes.buffer, 0, words);
  u32.set([rows.length, ids.size, dictionary.length, entries]);
  let at = 4;
  for (const { terms } of rows) u32[at++] = terms.length;
  for (const { lengths } of rows) for (let f = 0; f < STORED; f++) u32[at++] = lengths[f] as number;
  for (const { terms } of rows) for (const term of terms) u32[at++] = ids.get(term) as number;
  bytes.set(dictionary, words * 4);
  const counts = bytes.subarray(words * 4 + dictionary.length);
  let entry = 0;
  for (const { terms, tf } of rows) {
    for (let i = 0; i < terms.length; i++, entry++) {
      for (let f = 0; f < STORED; f++) {
        const count = tf[i * FIELD_COUNT + f] as number;
        if (!(Number.isInteger(count) && count >= 0 && count <= MAX_COUNT)) return undefined;
        counts[entry * STORED + f] = count;
      }
    }
  }
  return bytes;
}

/** What a chunk must be: the catalog and position it was read for. */
export type ExpectedAnalysis = {
  /** The catalog's hash (`snapshotCatalog`). */
  hash: string;
  /** Which chunk this should be. */
  chunk: number;
  /** Tools of the whole catalog. */
  total: number;
};

/**
 * Decodes and checks one stored chunk (text or bytes): format, catalog, fingerprint, position,
 * sizes, and every row's consistency (dictionary terms in range and distinct, each with a count,
 * field lengths that are the sums of the counts). Its term strings are shared between rows.
 */
export function decodeAnalysisChunk(
  value: unknown,
  expected: ExpectedAnalysis,
): { rows: TermCounts[] } | { invalid: string } {
  const text = typeof value === 'string';
  if (!(text || value instanceof Uint8Array)) return { invalid: 'not an analysis chunk' };
  const head = text ? value.slice(0, 256) : latin1.decode(value.subarray(0, 256));
  const fields = head.split('|', 6);
  if (fields[0] !== FORMAT || fields.length < 6) return { invalid: 'not an analysis chunk' };
  const [, hash, print, rowsText, totalText, chunkText] = fields as string[];
  if (hash !== expected.hash) return { invalid: 'a chunk of another catalog' };
  if (print !== analyzerFingerprint()) return { invalid: 'made by another analyser' };
  const { chunk, total } = expected;
  const rows = Math.min(ANALYSIS_CHUNK_ROWS, total - chunk * ANALYSIS_CHUNK_ROWS);
  if (rowsText !== String(rows) || totalText !== String(total) || chunkText !== String(chunk))
    return { invalid: `chunk ${chunkText} of ${totalText} rows, expected ${chunk} of ${total}` };
  const payloadAt = fields.join('|').length + 1;
  let bytes: Uint8Array;
  if (text) {
    const base64 = value.slice(payloadAt);
    bytes = new Uint8Array(base64ByteLength(base64));
    if (!decodeBase64Into(base64, bytes)) return { invalid: 'not base64' };
  } else {
    // Copied (a Buffer's `slice` would not): the u32 sections need an aligned buffer.
    bytes = new Uint8Array(value.subarray(payloadAt));
  }
  return decodePayload(bytes, rows);
}

function decodePayload(
  bytes: Uint8Array,
  rows: number,
): { rows: TermCounts[] } | { invalid: string } {
  if (bytes.length < HEAD) return { invalid: 'wrong payload length' };
  const [storedRows, terms, dictionaryBytes, entries] = new Uint32Array(
    bytes.buffer,
    0,
    4,
  ) as unknown as number[];
  const words = 4 + rows * (1 + STORED) + entries!;
  if (storedRows !== rows || bytes.length !== words * 4 + dictionaryBytes! + entries! * STORED)
    return { invalid: 'wrong payload length' };
  const u32 = new Uint32Array(bytes.buffer, 0, words);
  const dictionary = utf8Text
    .decode(bytes.subarray(words * 4, words * 4 + dictionaryBytes!))
    .split('\n');
  if (dictionary.length !== terms || dictionary.includes(''))
    return { invalid: 'a bad dictionary' };
  const counts = bytes.subarray(words * 4 + dictionaryBytes!);
  const seen = new Int32Array(terms).fill(-1);
  const out: TermCounts[] = [];
  let lengthAt = 4 + rows;
  let idAt = 4 + rows * (1 + STORED);
  let entry = 0;
  for (let r = 0; r < rows; r++) {
    const n = u32[4 + r] as number;
    if (idAt + n > words) return { invalid: 'wrong payload length' };
    const rowTerms = new Array<string>(n);
    const tf = new Float32Array(n * FIELD_COUNT);
    const lengths = new Float32Array(FIELD_COUNT);
    for (let i = 0; i < n; i++, entry++) {
      const id = u32[idAt++] as number;
      if (id >= terms! || seen[id] === r) return { invalid: `row ${r}: a bad or repeated term` };
      seen[id] = r;
      rowTerms[i] = dictionary[id] as string;
      let any = 0;
      for (let f = 0; f < STORED; f++) {
        const count = counts[entry * STORED + f] as number;
        tf[i * FIELD_COUNT + f] = count;
        lengths[f]! += count;
        any |= count;
      }
      if (any === 0) return { invalid: `row ${r}: a term without a count` };
    }
    for (let f = 0; f < STORED; f++) {
      if (lengths[f] !== u32[lengthAt++])
        return { invalid: `row ${r}: lengths that are not the counts' sums` };
    }
    out.push({ terms: rowTerms, tf, lengths });
  }
  return entry === entries ? { rows: out } : { invalid: 'wrong payload length' };
}

const utf8 = new TextEncoder();
const utf8Text = new TextDecoder();
// The header is ASCII; bytes past it may not be text at all.
const latin1 = new TextDecoder('latin1');
