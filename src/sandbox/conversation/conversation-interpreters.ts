// conversation/: conversation interpreters: a live Python per chat, its history, replay after loss,
// placement on engines.
import type Docker from 'dockerode';
import { dockerCall, isGone } from '../docker/docker-call.ts';
import type { EngineSet } from '../engines/engine-set.ts';
import { resolveRecordCaps } from '../output/record-budget.ts';
import type {
  InterpreterRestore,
  SandboxCellResult,
  SandboxConversation,
  SandboxOutputChunk,
} from '../types.ts';
import type { CellRequest } from './cell-protocol.ts';
import { ConversationHistory, type InterpreterHandle, type Owner } from './conversation-history.ts';
import { InterpreterPool } from './interpreter-pool.ts';
import { makeRoomForUser } from './user-interpreters.ts';
import type { ResolvedDockerSandboxOptions } from '../options/docker-sandbox-options.ts';
import type { ResolvedConversationOptions } from '../options/conversation-options.ts';
import { type PlacedInterpreter, placeInterpreter } from './interpreter-placement.ts';
import { type KnownInterpreter, PlacementGate } from './placement-gate.ts';
import { replayHistory } from './replay-history.ts';
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
 * const interpreters = new ConversationInterpreters({ engines, options, sandbox });
 * const result = await interpreters.run({ code, conversation, files: [], timeoutMs: 30_000, abortSignal });
 * ```
 */
export class ConversationInterpreters {
  private readonly engines: EngineSet;
  private readonly options: ResolvedConversationOptions;
  private readonly preimport: readonly string[];
  private readonly dockerTimeoutMs: number;
  private readonly history: ConversationHistory;
  /** Interpreters this process used, for eviction order. */
  private readonly known = new Map<string, KnownInterpreter>();
  /** The tail of each conversation's queue of cells in this process. */
  private readonly queues = new Map<string, Promise<unknown>>();
  /** The tail of each user's queue of placements: their list in the store is read, then written. */
  private readonly placements = new Map<string, Promise<unknown>>();

  private readonly sandbox: ResolvedDockerSandboxOptions;
  private readonly pool: InterpreterPool;
  private readonly gate: PlacementGate;

  constructor({
    engines,
    options,
    sandbox,
  }: {
    /** Where interpreters run. */
    engines: EngineSet;
    /** Store, bounds and limits of interpreters. */
    options: ResolvedConversationOptions;
    /** The sandbox's options: pre-imports, output caps, Docker deadlines. */
    sandbox: ResolvedDockerSandboxOptions;
  }) {
    this.engines = engines;
    this.options = options;
    this.sandbox = sandbox;
    this.preimport = sandbox.preimport;
    this.dockerTimeoutMs = sandbox.dockerTimeoutMs;
    // Nothing is read or written until the first cell: apps that never use conversations pay nothing.
    this.history = new ConversationHistory({ options });
    const gate = new PlacementGate({ engines, options, dockerTimeoutMs: sandbox.dockerTimeoutMs });
    this.gate = gate;
    this.pool = new InterpreterPool({
      options,
      preimport: sandbox.preimport,
      dockerTimeoutMs: sandbox.dockerTimeoutMs,
      reserve: engine => gate.reserve({ engine, ifRoom: true }).catch(() => undefined),
    });
  }

  /** Interpreters ready and waiting for a new conversation. */
  get warmCount(): number {
    return this.pool.readyCount;
  }

  /** Starts the waiting interpreters on every healthy engine (done on first use otherwise). */
  prewarm(): void {
    for (const engine of this.engines.engines) this.pool.fill(engine);
  }

  /** Stops the pool (waiting interpreters are removed); the sandbox removes the rest. */
  async close(): Promise<void> {
    await this.pool.close();
  }

  /** Runs one cell in its conversation's interpreter (after the conversation's earlier cells in this process). */
  run(call: CellCall): Promise<SandboxCellResult> {
    const { id, userId } = checkConversation(call.conversation);
    const key = JSON.stringify([userId, id]);
    const { maxImages, maxOutputFiles, maxArtifactBytes, maxOutputBytes } = this.sandbox;
    const caps = resolveRecordCaps({
      images: maxImages,
      files: maxOutputFiles,
      bytes: maxArtifactBytes,
    });
    const limits = { caps, timeoutMs: call.timeoutMs, maxOutputBytes };
    return inTurn({
      queues: this.queues,
      key,
      work: () => this.runNow({ ...call, owner: { userId, conversationId: id }, limits }),
    });
  }

  private async runNow(call: PlacedCall): Promise<SandboxCellResult> {
    const { owner, abortSignal, limits } = call;
    const stored = await this.history.load(owner);
    const reached = stored === undefined ? undefined : await this.reach(stored);
    if (stored !== undefined && reached !== undefined && !('lost' in reached)) {
      call.trace?.placed({ engine: reached.engine.name, interpreter: 'live' });
      return this.runIn({
        ...{ call, handle: stored, live: reached, restored: undefined, carried: [] },
        started: false,
      });
    }
    let live = await this.place(owner.userId, abortSignal);
    call.trace?.placed({ engine: live.engine.name, interpreter: 'started' });
    const handle = newHandle(live, stored);
    if (stored === undefined || (stored.cells.length === 0 && stored.inputs.length === 0)) {
      return this.runIn({ call, handle, live, restored: undefined, carried: [], started: true });
    }
    const replay = await replayHistory({
      ...{ placed: live, handle, owner, history: this.history, limits, abortSignal },
      reason: reached !== undefined && 'lost' in reached ? reached.lost : 'stopped',
      dockerTimeoutMs: this.dockerTimeoutMs,
      idleMs: this.options.idleMs,
    }).catch(async (error: unknown) => {
      // Nothing records the new interpreter yet: it must not idle on, holding memory.
      await this.discard(live);
      throw error;
    });
    if (!replay.ended) {
      return this.runIn({
        ...{ call, handle, live, restored: replay.restore },
        carried: replay.pendingFiles,
        started: true,
      });
    }
    // A kept cell stopped the new interpreter again: starting empty beats failing the user's
    // cell, and the history that cannot be restored is dropped (the summary says so).
    await this.discard(live);
    live = await this.place(owner.userId, abortSignal);
    const empty = { ...newHandle(live, undefined), cellCount: handle.cellCount };
    return this.runIn({
      ...{ call, handle: empty, live, restored: replay.restore, carried: [] },
      started: true,
    });
  }

  private async runIn({
    call,
    handle,
    live,
    restored,
    carried,
    started,
  }: {
    call: PlacedCall;
    handle: InterpreterHandle;
    live: PlacedInterpreter;
    restored: InterpreterRestore | undefined;
    carried: Array<{ path: string; data: Uint8Array }>;
    /** Started for this cell: no stored handle names it until the end, so a failure removes it. */
    started: boolean;
  }): Promise<SandboxCellResult> {
    const { owner, code, abortSignal, onOutput, limits } = call;
    const unrecorded = async <T>(work: () => Promise<T>): Promise<T> => {
      try {
        return await work();
      } catch (error) {
        if (started) await this.discard(live);
        throw error;
      }
    };
    const fresh = await unrecorded(() => this.history.addInputs(owner, handle, call.files));
    const files = [...carried.filter(c => !fresh.some(f => f.path === c.path)), ...fresh];
    const known = { usedAt: Date.now(), busy: true };
    this.known.set(live.container.id, known);
    let run: Awaited<ReturnType<typeof runCell>>;
    try {
      run = await runCell({
        container: live.container,
        secret: live.secret,
        request: { ...limits, code, files, replay: false },
        dockerTimeoutMs: this.dockerTimeoutMs,
        abortSignal,
        onOutput,
      });
    } catch (error) {
      // Killed on abort, or its engine failed: either way not to be used again.
      await this.discard(live);
      throw error;
    } finally {
      known.busy = false;
      known.usedAt = Date.now();
    }
    const cell = ++handle.cellCount;
    if (run.status === 'success') this.history.keepCell(handle, { n: cell, code });
    handle.usedAt = Date.now();
    if (run.ended) this.known.delete(live.container.id);
    await unrecorded(() => this.history.save(owner, handle));
    live.engine.runs++;
    const { ended: _, ...result } = run;
    return { ...result, cell, ...(restored ? { restored } : {}) };
  }

  /** The live interpreter a handle names, or why it is gone. */
  private async reach(
    handle: InterpreterHandle,
  ): Promise<PlacedInterpreter | { lost: InterpreterRestore['reason'] }> {
    const engine = this.engines.engines.find(e => e.name === handle.engine && e.state === 'up');
    if (engine === undefined) return { lost: 'engine' };
    const container = engine.docker.getContainer(handle.containerId);
    let info: Docker.ContainerInspectInfo;
    try {
      info = await dockerCall({
        operation: 'container inspect',
        timeoutMs: this.dockerTimeoutMs,
        call: abortSignal => container.inspect({ abortSignal }),
      });
    } catch (error) {
      if (isGone(error)) return { lost: 'stopped' };
      engine.toError(error);
      return { lost: 'engine' };
    }
    if (!info.State.Running) {
      this.known.delete(handle.containerId);
      void engine.cleanup.remove(container);
      // The supervisor exits 0 only when idle for `idleMs`.
      return { lost: info.State.ExitCode === 0 && !info.State.OOMKilled ? 'idle' : 'stopped' };
    }
    return { engine, container, secret: handle.secret, startedAt: handle.startedAt };
  }

  /** Removes an interpreter nothing will use again (in the background; failures are reported). */
  private async discard(live: PlacedInterpreter): Promise<void> {
    this.known.delete(live.container.id);
    void live.engine.cleanup.remove(live.container);
  }

  /**
   * A new interpreter for one of `userId`'s conversations, after making room under
   * `maxPerUser` (see `makeRoomForUser`); recorded in the user's list in the store.
   */
  private place(userId: string, abortSignal: AbortSignal): Promise<PlacedInterpreter> {
    // One at a time per user in this process: concurrent placements would each read the list,
    // then each write it, and the last write would forget the others' interpreters. Across
    // replicas this stays best effort (see the docs).
    return inTurn({
      queues: this.placements,
      key: userId,
      work: () => this.placeNow(userId, abortSignal),
    });
  }

  private async placeNow(userId: string, abortSignal: AbortSignal): Promise<PlacedInterpreter> {
    // Interpreters idle longer than idleMs have ended by themselves: forget them.
    const horizon = Date.now() - this.options.idleMs - 60_000;
    for (const [id, known] of this.known) {
      if (!known.busy && known.usedAt < horizon) this.known.delete(id);
    }
    await this.history.sweep();
    const mine = await makeRoomForUser({
      ...{ userId, history: this.history, engines: this.engines, known: this.known },
      ...{ maxPerUser: this.options.maxPerUser, dockerTimeoutMs: this.dockerTimeoutMs },
    });
    const placed = await placeInterpreter({
      ...{ engines: this.engines, gate: this.gate, options: this.options },
      preimport: this.preimport,
      ...{ pool: this.pool, known: this.known, dockerTimeoutMs: this.dockerTimeoutMs, abortSignal },
    });
    const { engine, container, startedAt } = placed;
    mine.push({ engine: engine.name, containerId: container.id, startedAt });
    try {
      await this.history.saveUserInterpreters(userId, mine);
    } catch (error) {
      // Unrecorded, it would escape the user's bound and idle on, holding memory.
      await this.discard(placed);
      throw error;
    }
    return placed;
  }
}

function newHandle(
  placed: PlacedInterpreter,
  previous: InterpreterHandle | undefined,
): InterpreterHandle {
  return {
    v: 1,
    engine: placed.engine.name,
    containerId: placed.container.id,
    secret: placed.secret,
    startedAt: placed.startedAt,
    usedAt: Date.now(),
    cellCount: previous?.cellCount ?? 0,
    cells: previous?.cells ?? [],
    dropped: previous?.dropped ?? 0,
    inputs: previous?.inputs ?? [],
  };
}
