import { describe, expect, it } from 'vitest';
import { markerPrefix } from '../../../src/sandbox/in-container/bootstrap.ts';
import { FrameDemuxer } from '../../../src/sandbox/docker/frame-demuxer.ts';
import { OutputCollector } from '../../../src/sandbox/output/output-collector.ts';
import type { RecordCaps } from '../../../src/sandbox/output/record-budget.ts';
import type { SandboxOutputChunk } from '../../../src/sandbox/types.ts';

const nonce = '0123456789abcdef0123456789abcdef';
const proofToken = 'fedcba9876543210fedcba9876543210';

/** One Docker multiplexed frame. */
function frame(stream: 1 | 2, text: string | Buffer): Buffer {
  const payload = typeof text === 'string' ? Buffer.from(text) : text;
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

function collect({
  maxBytes = 1_000,
  maxArtifactBytes = 10_000,
  caps = {},
}: {
  maxBytes?: number;
  maxArtifactBytes?: number;
  caps?: Partial<RecordCaps>;
} = {}) {
  const events = { chunks: [] as SandboxOutputChunk[], limit: 0, markers: [] as number[] };
  const collector = new OutputCollector({
    marker: markerPrefix(nonce),
    proof: markerPrefix(proofToken),
    maxBytes,
    caps: { images: 10, files: 20, bytes: maxArtifactBytes, ...caps },
    onOutput: chunk => events.chunks.push(chunk),
    onLimit: () => events.limit++,
    onMarkers: status => events.markers.push(status),
  });
  const out = (text: string | Buffer) => collector.push('stdout', Buffer.from(text));
  const err = (text: string | Buffer) => collector.push('stderr', Buffer.from(text));
  return { collector, events, out, err };
}

const prefix = `\0ai-toolbelt:${nonce}:`;
/** The supervisor's done marker. */
const mark = (status: number) => `\0ai-toolbelt:${proofToken}:${status}\n`;

/** The smallest byte string `pngSize` accepts as a PNG of this size. */
function fakePng(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(13);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    length,
    Buffer.from('IHDR'),
    ihdr,
  ]);
}

function fileRecord(meta: object, data: Buffer): Buffer {
  const bytes = data.length;
  return Buffer.concat([
    Buffer.from(`${prefix}file ${JSON.stringify({ ...meta, bytes })}\n`),
    data,
  ]);
}

describe('OutputCollector (caps, records, done markers)', () => {
  it('takes frames split at every byte boundary through the demuxer, never splitting a character', () => {
    const bytes = Buffer.concat([frame(1, 'héllo\n'), frame(2, 'oops\n'), frame(1, 'wörld\n')]);
    const { collector, events } = collect();
    const demuxer = new FrameDemuxer({
      onPayload: (stream, payload) => collector.push(stream, payload),
    });
    for (let i = 0; i < bytes.length; i++) demuxer.push(bytes.subarray(i, i + 1));
    collector.flush();
    expect(collector.result()).toMatchObject({
      stdout: 'héllo\nwörld\n',
      stderr: 'oops\n',
      truncated: false,
    });
    expect(events.chunks.map(c => c.text).join('')).toBe('héllo\noops\nwörld\n');
    expect(events.chunks.some(c => c.text.includes('\uFFFD'))).toBe(false);
  });

  it('reports the exit status once both streams end with the marker, and strips it', () => {
    const { collector, events, out, err } = collect();
    out(`out\n${mark(0).slice(0, 10)}`);
    expect(events.markers).toEqual([]);
    out(mark(0).slice(10));
    expect(events.markers).toEqual([]); // stderr's marker is still missing
    err(`err${mark(7)}`);
    expect(events.markers).toEqual([7]);
    collector.flush();
    expect(collector.result()).toMatchObject({ stdout: 'out\n', stderr: 'err', truncated: false });
    expect(events.chunks.map(c => c.text).join('')).toBe('out\nerr');
  });

  it('keeps a marker with another nonce as output and drops what follows the real marker', () => {
    const { collector, events, out, err } = collect();
    const forged = `\0ai-toolbelt:${'f'.repeat(32)}:0\n`;
    out(`a${forged}`);
    err(mark(0));
    out(mark(0));
    out('late');
    expect(events.markers).toEqual([0]);
    collector.flush();
    expect(collector.result().stdout).toBe(`a${forged}`);
  });

  it('returns images, files and notes written behind the prefix, split anywhere', () => {
    const { collector, events, out, err } = collect();
    const stream = Buffer.concat([
      Buffer.from('table\n'),
      fileRecord(
        { kind: 'image', path: 'figure-1.png', mediaType: 'image/png' },
        fakePng(400, 300),
      ),
      fileRecord(
        { kind: 'file', path: 'outputs/a.csv', mediaType: 'text/csv' },
        Buffer.from('x\n1\n'),
      ),
      fileRecord(
        { kind: 'image', path: 'figure-2.png', mediaType: 'image/png' },
        Buffer.from('nope'),
      ),
      Buffer.from(`${prefix}note "30 figures were made"\n`),
      Buffer.from(mark(0)),
    ]);
    for (let i = 0; i < stream.length; i += 3) out(stream.subarray(i, i + 3));
    err(mark(0));
    expect(events.markers).toEqual([0]);
    const result = collector.result();
    expect(result.stdout).toBe('table\n');
    expect(result.images.map(({ name, width, height }) => ({ name, width, height }))).toEqual([
      { name: 'figure-1.png', width: 400, height: 300 },
    ]);
    expect(result.files).toEqual([
      { path: 'outputs/a.csv', mediaType: 'text/csv', data: Buffer.from('x\n1\n') },
    ]);
    expect(result.notes).toEqual([
      '30 figures were made',
      'figure-2.png was dropped: not a PNG image',
    ]);
    expect(events.chunks.map(c => c.text).join('')).toBe('table\n');
  });

  it('drops files outside outputs/ and odd media types, and stops at the artifact cap', () => {
    const { collector, events, out } = collect({ maxArtifactBytes: 10 });
    out(fileRecord({ kind: 'file', path: '../etc/x', mediaType: 'text/plain' }, Buffer.from('1')));
    out(
      fileRecord({ kind: 'file', path: 'outputs/b', mediaType: 'text/html; x' }, Buffer.from('2')),
    );
    expect(collector.result().files).toEqual([
      { path: 'outputs/b', mediaType: 'application/octet-stream', data: Buffer.from('2') },
    ]);
    expect(collector.result().notes).toEqual(['a returned file with an invalid path was dropped']);
    out(fileRecord({ kind: 'file', path: 'outputs/c', mediaType: 'text/plain' }, Buffer.alloc(9)));
    expect(events.limit).toBe(1);
    expect(collector.overLimit).toBe(true);
  });

  it('treats garbled records as output again, with a note', () => {
    const { collector, out } = collect();
    out(
      `${prefix}file {"kind":"file","path":"outputs/a","mediaType":"text/plain","bytes":2}\nokTHREAD`,
    );
    out(mark(1));
    collector.flush();
    const result = collector.result();
    expect(result.files).toHaveLength(1);
    expect(result.notes[0]).toMatch(/lost/);
    expect(result.stdout).toBe('THREAD');
  });

  it('calls onLimit once at the cap and keeps exactly the cap', () => {
    const { collector, events, out } = collect({ maxBytes: 100 });
    for (let i = 0; i < 50; i++) out('x'.repeat(64));
    expect(events.limit).toBe(1);
    const result = collector.result();
    expect(result.truncated).toBe(true);
    expect(result.stdout).toBe('x'.repeat(100));
    expect(result.stderr).toBe('');
  });
});

describe('OutputCollector: only the supervisor ends a run', () => {
  it('treats a done marker behind the record nonce (which the code can know) as a broken record', () => {
    const { collector, events, out, err } = collect();
    out(`before\n${prefix}0\nafter\n`);
    err(`${prefix}0\n`);
    expect(events.markers).toEqual([]);
    out(mark(1));
    err(mark(1));
    expect(events.markers).toEqual([1]);
    const result = collector.result();
    expect(result.stdout).toBe('before\nafter\n');
    expect(result.notes[0]).toContain('some images or files were lost');
  });
});

describe('OutputCollector: records are counted on the host', () => {
  const file = (i: number) =>
    fileRecord({ kind: 'file', path: `outputs/f${i}`, mediaType: 'text/plain' }, Buffer.alloc(0));
  const image = () =>
    fileRecord({ kind: 'image', path: 'figure-1.png', mediaType: 'image/png' }, fakePng(1, 1));
  const note = (i: number) => Buffer.from(`${prefix}note ${JSON.stringify(`note ${i}`)}\n`);

  it('takes exactly the caps a real run can fill, without stopping', () => {
    const { collector, events, out, err } = collect({ caps: { images: 2, files: 3, notes: 4 } });
    out(Buffer.concat([image(), image(), file(1), file(2), file(3)]));
    out(Buffer.concat([note(1), note(2), note(3), note(4), Buffer.from(mark(0))]));
    err(mark(0));
    expect(events).toMatchObject({ limit: 0, markers: [0] });
    const result = collector.result();
    expect([result.images.length, result.files.length, result.notes.length]).toEqual([2, 3, 4]);
  });

  it('stops at the first zero-byte file past maxOutputFiles, and reads nothing after it', () => {
    const { collector, events, out } = collect({ caps: { files: 20 } });
    const flood = Buffer.concat(Array.from({ length: 1000 }, (_, i) => file(i)));
    out(flood);
    out(flood);
    expect(events.limit).toBe(1);
    const result = collector.result();
    expect(result.files).toHaveLength(20);
    expect(result.notes).toEqual([
      'the run was stopped: it returned more than 20 files (maxOutputFiles)',
    ]);
    expect(result.truncated).toBe(true);
  });

  it('stops at the first 24-byte PNG past maxImages, counted over both streams', () => {
    const { collector, events, out, err } = collect({ caps: { images: 10 } });
    for (let i = 0; i < 6; i++) {
      out(image());
      err(image());
    }
    expect(events.limit).toBe(1);
    expect(collector.result().images).toHaveLength(10);
    expect(collector.result().notes.at(-1)).toMatch(/more than 10 images \(maxImages\)/);
  });

  it('stops past the notes cap and past the records cap, malformed records included', () => {
    const notes = collect({ caps: { notes: 3 } });
    notes.out(Buffer.concat([note(1), note(2), note(3), note(4), note(5)]));
    expect(notes.events.limit).toBe(1);
    expect(notes.collector.result().notes.slice(0, 3)).toEqual(['note 1', 'note 2', 'note 3']);

    const garbled = collect({ maxBytes: 1 << 20, caps: { images: 1, files: 1, notes: 1 } });
    for (let i = 0; i < 100; i++) garbled.out(`${prefix}not a record\n`);
    expect(garbled.events.limit).toBe(1);
    expect(garbled.collector.result().notes.at(-1)).toBe(
      'the run was stopped: it returned more than 3 records',
    );
  });
});
