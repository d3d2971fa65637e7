// Sandbox spans and metrics on the real engine (Docker + gVisor): conversation cells (a new
// interpreter, a live one, one restored after a timeout), and work refused as busy.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SandboxBusyError } from '../../src/errors/sandbox-busy-error.ts';
import type { DockerSandbox } from '../../src/sandbox/index.ts';
import { describeSandbox, suiteSandbox } from '../sandbox/sandbox-availability.ts';
import { type FinishedSpan, type OtelHarness, installOtel } from './otel-harness.ts';

let otel: OtelHarness;
beforeAll(() => {
  otel = installOtel();
});
afterAll(() => otel?.uninstall());

const named = (spans: FinishedSpan[], name: string) => spans.filter(span => span.name === name);

describeSandbox('sandbox spans on the real engine', () => {
  let sandbox: DockerSandbox;
  suiteSandbox(
    { warmPoolSize: 0, preimport: [], maxConcurrentExecutions: 1, maxQueued: 1 },
    created => {
      sandbox = created;
    },
  );

  it('gives each cell a span: its number, the interpreter, and how lost state was restored', async () => {
    otel.reset();
    const conversation = { id: 'telemetry-cells', userId: 'alice' };
    await sandbox.executeCell('n = 7', { conversation });
    // It ignores the interrupt at its deadline, so its interpreter is killed and later restored.
    const stubborn =
      'import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    n += 1';
    await sandbox.executeCell(stubborn, { conversation, timeoutMs: 1_500 });
    const restored = await sandbox.executeCell('print(n)', { conversation });
    expect(restored).toMatchObject({ status: 'success', stdout: '7\n', cell: 3 });

    const [first, stuck, third] = named(await otel.spans(), 'ai_toolbelt.sandbox.cell');
    expect(first!.attributes).toMatchObject({
      'ai_toolbelt.sandbox.cell.results': 0,
      'ai_toolbelt.sandbox.cell.ended': false,
      'ai_toolbelt.sandbox.cell.number': 1,
      'ai_toolbelt.sandbox.cell.interpreter': 'started',
      'ai_toolbelt.sandbox.cell.restored': false,
      'ai_toolbelt.sandbox.status': 'success',
      'ai_toolbelt.sandbox.timeout_ms': 10_000,
    });
    expect(first!.attributes['ai_toolbelt.sandbox.engine']).toEqual(expect.any(String));
    expect(stuck!.attributes).toMatchObject({
      'ai_toolbelt.sandbox.cell.interrupted': false,
      'ai_toolbelt.sandbox.cell.ended': true,
      'ai_toolbelt.sandbox.cell.number': 2,
      'ai_toolbelt.sandbox.cell.interpreter': 'live',
      'ai_toolbelt.sandbox.status': 'timeout',
      'ai_toolbelt.sandbox.timeout_ms': 1_500,
    });
    expect(stuck!.attributes['ai_toolbelt.sandbox.exit_code']).toBeUndefined();
    expect(third!.attributes).toMatchObject({
      'ai_toolbelt.sandbox.cell.number': 3,
      'ai_toolbelt.sandbox.cell.interpreter': 'started',
      'ai_toolbelt.sandbox.cell.restored': true,
      'ai_toolbelt.sandbox.cell.restore_reason': 'stopped',
      'ai_toolbelt.sandbox.cell.replayed': 1,
      'ai_toolbelt.sandbox.cell.replay_failed': 0,
      'ai_toolbelt.sandbox.stdout_bytes': 2,
    });
    expect(third!.attributes['ai_toolbelt.sandbox.cell.restore_ms']).toBeGreaterThan(0);
  });

  it('records queueing, counts a run refused as busy, and marks its span failed', async () => {
    otel.reset();
    // One slot, one place in line: the second run waits, the third is refused.
    const first = sandbox.execute('import time; time.sleep(1)');
    const second = sandbox.execute('print(2)');
    const refused = await sandbox.execute('print(3)').catch((error: unknown) => error);
    expect(SandboxBusyError.isInstance(refused)).toBe(true);
    expect((await first).status).toBe('success');
    expect((await second).stdout).toBe('2\n');

    const runs = named(await otel.spans(), 'ai_toolbelt.sandbox.run');
    const failed = runs.find(span => span.status.code === 2)!;
    expect(failed.attributes['error.type']).toBe('ToolbeltSandboxBusyError');
    const metrics = await otel.metrics();
    expect(metrics.get('ai_toolbelt.sandbox.busy_rejections')).toEqual([
      { value: 1, attributes: { 'ai_toolbelt.sandbox.resource': 'runs' } },
    ]);
    // A run without a warm pool starts its container: a pool miss.
    const ok = runs.filter(span => span.status.code !== 2);
    for (const span of ok) expect(span.attributes['ai_toolbelt.sandbox.warm']).toBe(false);
    expect(ok[0]!.attributes['ai_toolbelt.sandbox.start_ms']).toBeGreaterThan(50);
    // The second waited for the first's slot (its container's removal included).
    const waited = ok.map(span => span.attributes['ai_toolbelt.sandbox.queue_ms'] as number);
    expect(Math.max(...waited)).toBeGreaterThan(500);
    expect(metrics.get('ai_toolbelt.sandbox.queue.depth')).toEqual([{ value: 0, attributes: {} }]);
    const queued = metrics.get('ai_toolbelt.sandbox.queue.duration')![0]!.value as { max: number };
    expect(queued.max).toBeGreaterThan(0.5);
  });
});
