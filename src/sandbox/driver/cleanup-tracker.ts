import { SandboxCleanupError } from '../../errors/sandbox-cleanup-error.ts';
import { PendingWork } from '../../util/pending-work.ts';

/** What removals need from an engine (an `EngineDriver`, by shape). */
export type RemovingEngine = {
  /** Removes a box and resolves once it is gone. */
  remove(id: string): Promise<void>;
  /** "Already gone" answers. */
  isGone(error: unknown): boolean;
  /** The engine did not answer. */
  isTransportError(error: unknown): boolean;
  /** The typed error for a failure, naming the engine. */
  toError(error: unknown): unknown;
};

/**
 * Removes used boxes (containers, pods) in the background (a gVisor teardown takes ~70-100 ms,
 * which callers should not wait for) and keeps every failure: each is passed to `onCleanupError`
 * (or emitted as a process warning) at once, and `settle()` rejects with all of them, so a
 * failed removal is reported, never swallowed. A removal that failed because the engine did
 * not answer is handed to `onDeferred` instead (the engine retries it when it is back).
 */
export class CleanupTracker {
  private readonly pending = new PendingWork();
  private failures: { id: string; cause: unknown }[] = [];
  private readonly onCleanupError: ((error: SandboxCleanupError) => void) | undefined;
  private readonly engine: RemovingEngine;
  private readonly onDeferred: ((id: string) => void) | undefined;
  private readonly onRemoved = new Map<string, () => void>();

  constructor({
    engine,
    onCleanupError,
    onDeferred,
  }: {
    /** The engine the boxes run on. */
    engine: RemovingEngine;
    /** Told about each failed removal as it happens. */
    onCleanupError?: ((error: SandboxCleanupError) => void) | undefined;
    /** Takes removals that failed because the engine did not answer, to retry later. */
    onDeferred?: (id: string) => void;
  }) {
    this.onCleanupError = onCleanupError;
    this.engine = engine;
    this.onDeferred = onDeferred;
  }

  /**
   * Removes the box `id` (killing it if it still runs) in the background. The returned
   * promise settles (never rejects) once the removal is confirmed or has failed (failures are
   * reported as described above); callers that must know the box is gone await it.
   */
  remove(id: string): Promise<void> {
    const removal = this.engine.remove(id).then(
      () => this.removed(id),
      (error: unknown) => {
        // Docker: 404 already gone, 409 another removal of it is in progress.
        if (this.engine.isGone(error)) return this.removed(id);
        if (this.onDeferred !== undefined && this.engine.isTransportError(error)) {
          this.onDeferred(id);
          return;
        }
        this.fail(id, error);
      },
    );
    this.pending.track(removal);
    return removal;
  }

  /** Runs `release` once `containerId` is removed (what it held on the host: its egress proxy). */
  whenRemoved(containerId: string, release: () => void): void {
    this.onRemoved.set(containerId, release);
  }

  /**
   * Records that `containerId` is gone, however it went (a removal here, a sweep, another
   * replica, `docker rm`): every path that sees a removal ends here, so what the container held
   * is released once.
   */
  removed(containerId: string): void {
    const release = this.onRemoved.get(containerId);
    this.onRemoved.delete(containerId);
    release?.();
  }

  /** The containers something waits on the removal of (see `whenRemoved`). */
  held(): string[] {
    return [...this.onRemoved.keys()];
  }

  /** Records a container that could not be removed and tells `onCleanupError` at once. */
  fail(containerId: string, cause: unknown): void {
    const typed = this.engine.toError(cause);
    this.failures.push({ id: containerId, cause: typed });
    const error = new SandboxCleanupError({ containerIds: [containerId], causes: [typed] });
    if (this.onCleanupError !== undefined) {
      try {
        this.onCleanupError(error);
      } catch {
        // The failure is still kept and reported by settle().
      }
    } else {
      process.emitWarning(error.message, { type: error.name });
    }
  }

  /** Records failures found elsewhere (the start-up sweep) so that `settle()` reports them too. */
  report(error: SandboxCleanupError): void {
    error.containerIds.forEach((id, i) => this.fail(id, error.causes[i]));
  }

  /** Number of removals still in flight. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Waits for every removal started so far and returns (and forgets) the failures. */
  async collect(): Promise<{ id: string; cause: unknown }[]> {
    await this.pending.settled();
    return this.failures.splice(0);
  }

  /**
   * Waits for every removal started so far; rejects with one `SandboxCleanupError` naming
   * every container that could not be removed since the last call.
   */
  async settle(): Promise<void> {
    const failures = await this.collect();
    if (failures.length > 0) {
      throw new SandboxCleanupError({
        containerIds: failures.map(f => f.id),
        causes: failures.map(f => f.cause),
      });
    }
  }
}
