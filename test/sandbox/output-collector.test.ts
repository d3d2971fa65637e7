import { describe, expect, it } from 'vitest';
import { markerPrefix } from '../../src/sandbox/bootstrap.ts';
import { OutputCollector } from '../../src/sandbox/output-collector.ts';
import type { SandboxOutputChunk } from '../../src/sandbox/types.ts';

const nonce = '0123456789abcdef0123456789abcdef';

/** One Docker multiplexed frame. */
function frame(stream: 1 | 2, text: string | Buffer): Buffer {
  const payload = typeof text === 'string' ? Buffer.from(text) : text;
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

function collect({ maxBytes = 1_000 }: { maxBytes?: number } = {}) {
  const events = { chunks: [] as SandboxOutputChunk[], limit: 0, markers: [] as number[] };
  const collector = new OutputCollector({
    marker: markerPrefix(nonce),
    maxBytes,
    onOutput: chunk => events.chunks.push(chunk),
    onLimit: () => events.limit++,
    onMarkers: status => events.markers.push(status),
  });
  return { collector, events };
}

const mark = (status: number) => `\0ai-toolbelt:${nonce}:${status}\n`;

describe('OutputCollector (Docker stream demultiplexing, caps, done markers)', () => {
  it('demultiplexes frames split at every byte boundary', () => {
    const bytes = Buffer.concat([frame(1, 'héllo\n'), frame(2, 'oops\n'), frame(1, 'wörld\n')]);
    const { collector, events } = collect();
    for (let i = 0; i < bytes.length; i++) collector.push(bytes.subarray(i, i + 1));
    collector.flush();
    expect(collector.result()).toEqual({
      stdout: 'héllo\nwörld\n',
      stderr: 'oops\n',
      truncated: false,
    });
    // Multi-byte characters are never split in streamed chunks.
    expect(events.chunks.map(c => c.text).join('')).toBe('héllo\noops\nwörld\n');
    expect(events.chunks.some(c => c.text.includes('\uFFFD'))).toBe(false);
  });

  it('reports the exit status once both streams end with the marker, and strips it', () => {
    const { collector, events } = collect();
    collector.push(frame(1, `out\n${mark(0).slice(0, 10)}`));
    expect(events.markers).toEqual([]);
    collector.push(frame(1, mark(0).slice(10)));
    expect(events.markers).toEqual([]); // stderr's marker is still missing
    collector.push(frame(2, `err${mark(7)}`));
    expect(events.markers).toEqual([7]);
    collector.flush();
    expect(collector.result()).toEqual({ stdout: 'out\n', stderr: 'err', truncated: false });
    expect(events.chunks.map(c => c.text).join('')).toBe('out\nerr');
  });

  it('ignores a marker with another nonce and a marker followed by more output', () => {
    const { collector, events } = collect();
    const forged = `\0ai-toolbelt:${'f'.repeat(32)}:0\n`;
    collector.push(frame(1, `a${forged}`));
    collector.push(frame(2, mark(0)));
    collector.push(frame(1, mark(0)));
    collector.push(frame(1, 'late'));
    expect(events.markers).toEqual([0]);
    collector.flush();
    expect(collector.result().stdout).toBe(`a${forged}${mark(0)}late`);
  });

  it('calls onLimit once at the cap and keeps exactly the cap', () => {
    const { collector, events } = collect({ maxBytes: 100 });
    for (let i = 0; i < 50; i++) collector.push(frame(1, 'x'.repeat(64)));
    expect(events.limit).toBe(1);
    const result = collector.result();
    expect(result.truncated).toBe(true);
    expect(result.stdout).toBe('x'.repeat(100));
    expect(result.stderr).toBe('');
  });
});
