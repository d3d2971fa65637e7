// conversation/: conversation interpreters: a live Python per chat, placement on engines, the cell
// protocol (what a chat keeps for restoring, and the replay, are in history/).
import { SandboxBusyError } from '../../errors/sandbox-busy-error.ts';
import type { EngineSet } from '../engines/engine-set.ts';
import { resolveRecordCaps } from '../output/record-budget.ts';
import type {
  InterpreterRestore,
  SandboxCellResult,
  SandboxConversation,
  SandboxDisplayResult,
  SandboxOutputChunk,
  SandboxResult,
} from '../types.ts';
import type { CellRequest } from './cell-protocol.ts';
import { ConversationHistory, type Owner } from './history/conversation-history.ts';
import { withNetworkUsage } from '../egress/network-usage.ts';
import { endedSummary } from './history/ended-summary.ts';
import { type InterpreterHandle, newHandle } from './history/interpreter-handle.ts';
import { reachInterpreter } from './reach-interpreter.ts';
import { UserPlacements } from './user-placements.ts';
import type { ResolvedDockerSandboxOptions } from '../options/docker-sandbox-options.ts';
import type { ResolvedConversationOptions } from '../options/conversation-options.ts';
import type { PlacedInterpreter } from './interpreter-placement.ts';
import type { KnownInterpreter } from './bounds/placement-gate.ts';
import { replayHistory, summarize } from './history/replay-history.ts';
import { runCell } from './run-cell.ts';
import { checkConversation } from './check-conversation.ts';
import { inTurn } from '../../util/in-turn.ts';
import type { RunTrace } from '../../telemetry/sandbox-telemetry.ts';

/** A cell as `DockerSandbox#executeCell` hands it on, already checked. */
export type CellCall = {
  code: string;
  conversation: SandboxConversation;
  files: ReadonlyArray<{ path: string; data: Uint8Array }>;
  timeoutMs: number;
  abortSignal: AbortSignal;
  onOutput?: ((chunk: SandboxOutputChunk) => void) | undefined;
  onResult?: ((result: SandboxDisplayResult) => void) | undefined;
  /** Hears where the cell runs (telemetry); undefined when nobody listens. */
  trace?: RunTrace | undefined;
};

/** What a cell runs with: the call plus its limits (from the sandbox's options). */
type PlacedCall = CellCall & {
  owner: Owner;
  limits: Omit<CellRequest, 'code' | 'files' | 'replay'>;
};

/**
 * The conversation interpreters of one `DockerSandbox`: finds a conversation's live
 * interpreter through its handle in the store (whichever replica started it), starts one
 * when there is none, restores a lost one by replaying the conversation's kept cells, runs
 * the cell, and records it. Cells of one conversation run one at a time in this process.
 *
 * @example
 * ```ts
 * const interpreters = new ConversationInterpreters({ engines, options, sandbox, instanceId });
 * const result = await interpreters.run({ code, conversation, files: [], timeoutMs: 30_000, abortSignal });
 * ```
 */
export class ConversationInterpreters {
  private readonly engines: EngineSet;
  private readonly options: ResolvedConversationOptions;
  private readonly history: ConversationHistory;
  /** Interpreters this process used, for eviction order. */
  private readonly known = new Map<string, KnownInterpreter>();
  /** The tail of each conversation's queue of cells in this process. */
  private readonly queues = new Map<string, Promise<unknown>>();
  /** Cells of each conversation running or waiting in this process. */
  private readonly queued = new Map<string, number>();
  /** This sandbox instance (`DockerSandbox#instanceId`), recorded as the replica serving a handle. */
  private readonly instanceId: string;
  private readonly sandbox: ResolvedDockerSandboxOptions;
  private readonly placements: UserPlacements;

  constructor({
    engines,
    options,
    sandbox,
    instanceId,
  }: {
    /** Where interpreters run. */
    engines: EngineSet;
    /** This sandbox instance (`DockerSandbox#instanceId`). */
    instanceId: string;
    /** Store, bounds and limits of interpreters. */
    options: ResolvedConversationOptions;
    /** The sandbox's options: pre-imports, output caps, Docker deadlines. */
    sandbox: ResolvedDockerSandboxOptions;
  }) {
    this.engines = engines;
    this.options = options;
    this.sandbox = sandbox;
    this.instanceId = instanceId;
    // Nothing is read or written until the first cell: apps that never use conversations pay nothing.
    this.history = new ConversationHistory({ options });
    this.placements = new UserPlacements({
      ...{ engines, options, history: this.history, known: this.known, instanceId },
      ...{ preimport: sandbox.preimport, dockerTimeoutMs: sandbox.dockerTimeoutMs },
      scope: sandbox.scope,
      image: sandbox.image,
    });
  }

  /** Interpreters ready and waiting for a new conversation. */
  get warmCount(): number {
    return this.placements.warmCount;
  }

  /** Starts the waiting interpreters on every healthy engine (done on first use otherwise). */
  prewarm(): void {
    this.placements.prewarm();
  }

  /** Stops the pool; returns the interpreters to leave running (see `UserPlacements#close`). */
  close(): Promise<Set<string>> {
    return this.placements.close();
  }

  /** Runs one cell in its conversation's interpreter (after the conversation's earlier cells in this process). */
  run(call: CellCall): Promise<SandboxCellResult> {
    const { id, userId } = checkConversation(call.conversation);
    const key = JSON.stringify([userId, id]);
    // The running cell and those waiting behind it: a client sending cells faster than they run
    // would otherwise queue without bound.
    const queued = this.queued.get(key) ?? 0;
    if (queued > this.options.maxQueuedCells) {
      const retryAfterMs = Math.min(call.timeoutMs, 30_000);
      throw new SandboxBusyError({
        resource: 'cells',
        limit: this.options.maxQueuedCells,
        retryAfterMs,
      });
    }
    this.queued.set(key, queued + 1);
    const { maxImages, maxOutputFiles, maxArtifactBytes, maxOutputBytes, maxResults } =
      this.sandbox;
    const caps = resolveRecordCaps({
      ...{ images: maxImages, files: maxOutputFiles, bytes: maxArtifactBytes },
      results: maxResults,
    });
    const limits = { caps, timeoutMs: call.timeoutMs, maxOutputBytes };
    return inTurn({
      queues: this.queues,
      key,
      work: () => this.runNow({ ...call, owner: { userId, conversationId: id }, limits }),
    }).finally(() => {
      const left = (this.queued.get(key) ?? 1) - 1;
      if (left > 0) this.queued.set(key, left);
      else this.queued.delete(key);
    });
  }

  private async runNow(call: PlacedCall): Promise<SandboxCellResult> {
    const { owner, abortSignal, limits } = call;
    const stored = await this.history.load(owner);
    const reached =
      stored === undefined
        ? undefined
        : await reachInterpreter({ handle: stored, engines: this.engines, known: this.known });
    if (stored !== undefined && reached !== undefined && !('lost' in reached)) {
      call.trace?.placed({ engine: reached.engine.name, interpreter: 'live' });
      this.placements.serve(owner, reached);
      const handle = { ...stored, servedBy: this.instanceId };
      return this.runIn({ call, handle, live: reached, restored: undefined, carried: [] });
    }
    const live = await this.placements.place(owner, abortSignal, call.timeoutMs);
    call.trace?.placed({ engine: live.engine.name, interpreter: 'started' });
    const handle = newHandle({ placed: live, servedBy: this.instanceId, previous: stored });
    if (stored === undefined || (stored.cells.length === 0 && stored.inputs.length === 0)) {
      const seed = handle.seed;
      return this.runIn({
        call,
        handle,
        live,
        restored: undefined,
        carried: [],
        started: true,
        seed,
      });
    }
    const reason = reached !== undefined && 'lost' in reached ? reached.lost : 'stopped';
    const { caps, maxOutputBytes } = limits;
    const replay = await replayHistory({
      ...{ placed: live, handle, owner, history: this.history, reason, abortSignal },
      limits: { caps, maxOutputBytes },
      idleMs: this.options.idleMs,
      deadlineMs: this.options.replayDeadlineMs,
    }).catch(async (error: unknown) => {
      // Nothing records the new interpreter yet: it must not idle on, holding memory. The
      // stored handle is untouched: the next cell tries the restore again.
      await this.placements.discard(live);
      throw error;
    });
    const summary = (outcome: 'restored' | 'retry' | 'given-up') =>
      summarize({
        restore: replay.restore,
        kept: handle.cells.length,
        outcome,
        idleMs: this.options.idleMs,
      });
    if (!replay.ended) {
      Object.assign(handle, { absent: replay.absent, failedRestores: 0 });
      const restored = summary('restored');
      return this.runIn({
        call,
        handle,
        live,
        restored,
        carried: replay.pendingFiles,
        started: true,
        ...(replay.seeded ? {} : { seed: handle.seed }),
      });
    }
    await this.placements.discard(live);
    const failedRestores = stored.failedRestores + 1;
    if (failedRestores < 2) {
      // The history stays as it was (its handle still names the lost interpreter), so the next
      // cell restores again: a kept cell that ended the replay by bad luck (memory near the
      // limit, a slow engine) costs one turn, not the conversation's state.
      await this.saveHandle(owner, { ...stored, failedRestores });
      const restored = summary('retry');
      return { ...notRun(), cell: stored.cellCount, restored };
    }
    // A second restore in a row ended by a kept cell: starting empty beats failing every cell.
    await this.history.forget(owner, stored);
    const fresh = await this.placements.place(owner, abortSignal, call.timeoutMs);
    const empty = {
      ...newHandle({ placed: fresh, servedBy: this.instanceId }),
      ...{ cellCount: stored.cellCount, seed: stored.seed },
    };
    const restored = summary('given-up');
    return this.runIn({
      ...{ call, handle: empty, live: fresh, restored, carried: [] },
      ...{ started: true, seed: empty.seed },
    });
  }

  private async runIn({
    call,
    handle,
    live,
    restored,
    carried,
    started = false,
    seed,
  }: {
    call: PlacedCall;
    handle: InterpreterHandle;
    live: PlacedInterpreter;
    restored: InterpreterRestore | undefined;
    carried: Array<{ path: string; data: Uint8Array }>;
    /** Started for this cell: no stored handle names it until the end, so a failure removes it. */
    started?: boolean;
    /** The conversation's seed, for a new interpreter no replayed cell has seeded. */
    seed?: number;
  }): Promise<SandboxCellResult> {
    const { owner, code, abortSignal, onOutput, onResult, limits } = call;
    const unrecorded = async <T>(work: () => Promise<T>): Promise<T> => {
      try {
        return await work();
      } catch (error) {
        if (started) await this.placements.discard(live);
        throw error;
      }
    };
    const cell = handle.cellCount + 1;
    const fresh = await unrecorded(() => this.history.addInputs(owner, handle, call.files, cell));
    const files = [...carried.filter(c => !fresh.some(f => f.path === c.path)), ...fresh];
    const known = { usedAt: Date.now(), busy: true };
    this.known.set(live.id, known);
    this.placements.use(live, limits.timeoutMs);
    // A replica that did not start the interpreter takes its proxy over if its starter is gone.
    const network = await live.engine.adoptEgress(live.id).catch(() => undefined);
    let run: Awaited<ReturnType<typeof runCell>>;
    try {
      run = await runCell({
        driver: live.engine.driver,
        id: live.id,
        secret: live.secret,
        request: { ...limits, code, files, replay: false, ...(seed !== undefined ? { seed } : {}) },
        abortSignal,
        onOutput,
        onResult,
      });
    } catch (error) {
      // Killed on abort, or its engine failed: either way not to be used again.
      await this.placements.discard(live);
      throw error;
    } finally {
      known.busy = false;
      known.usedAt = Date.now();
      this.placements.use(live, 0);
    }
    handle.cellCount = cell;
    if (run.status === 'success') {
      const kept = { n: cell, code, timeoutMs: limits.timeoutMs };
      await unrecorded(() => this.history.keepCell(owner, handle, kept));
    }
    handle.usedAt = Date.now();
    if (run.ended) this.known.delete(live.id);
    await unrecorded(() => this.saveHandle(owner, handle));
    live.engine.runs++;
    const { ended, interrupted, ...result } = run;
    return {
      ...withNetworkUsage(result, network),
      cell,
      ...(interrupted ? { interrupted: true as const } : {}),
      ...(restored ? { restored } : {}),
      ...(ended ? { ended: endedSummary({ status: run.status, handle }) } : {}),
    };
  }

  /** Saves a handle; the interpreters of the user's conversations the per-user bounds evicted go. */
  private async saveHandle(owner: Owner, handle: InterpreterHandle): Promise<void> {
    for (const evicted of await this.history.save(owner, handle)) {
      const engine = this.engines.engines.find(e => e.name === evicted.engine);
      if (engine === undefined || this.known.get(evicted.containerId)?.busy) continue;
      this.known.delete(evicted.containerId);
      void engine.remove(evicted.containerId);
    }
  }
}

/** A cell's result when it did not run: the restore before it failed (its line says why). */
function notRun(): SandboxResult {
  return {
    status: 'crashed',
    exitCode: null,
    stdout: '',
    stderr:
      'InterpreterRestoreError: the earlier state could not be restored, so this cell did not run.',
    truncated: false,
    durationMs: 0,
    images: [],
    files: [],
    notes: [],
  };
}
