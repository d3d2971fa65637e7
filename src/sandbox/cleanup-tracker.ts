import type Docker from 'dockerode';
import { SandboxCleanupError } from '../errors/sandbox-cleanup-error.ts';
import { dockerCall, isGone } from './docker-call.ts';

/**
 * Removes used containers in the background (a gVisor teardown takes ~70-100 ms, which
 * callers should not wait for) and keeps every failure: each is passed to `onCleanupError`
 * (or emitted as a process warning) at once, and `settle()` rejects with all of them, so a
 * failed removal is reported, never swallowed.
 */
export class CleanupTracker {
  private readonly pending = new Set<Promise<void>>();
  private failedIds: string[] = [];
  private failures: unknown[] = [];
  private readonly dockerTimeoutMs: number;
  private readonly onCleanupError: ((error: SandboxCleanupError) => void) | undefined;

  constructor({
    dockerTimeoutMs,
    onCleanupError,
  }: {
    /** Deadline of each removal call. */
    dockerTimeoutMs: number;
    /** Told about each failed removal as it happens. */
    onCleanupError?: (error: SandboxCleanupError) => void;
  }) {
    this.dockerTimeoutMs = dockerTimeoutMs;
    this.onCleanupError = onCleanupError;
  }

  /** Force-removes `container` (killing it if it still runs) in the background. */
  remove(container: Docker.Container): void {
    const removal = dockerCall({
      operation: 'container remove',
      timeoutMs: this.dockerTimeoutMs,
      call: abortSignal => container.remove({ force: true, v: true, abortSignal }),
    }).then(
      () => undefined,
      (error: unknown) => {
        // 404: already gone; 409: another removal of it is in progress.
        if (isGone(error)) return;
        this.fail(container.id, error);
      },
    );
    this.pending.add(removal);
    void removal.finally(() => this.pending.delete(removal));
  }

  private fail(containerId: string, cause: unknown): void {
    this.failedIds.push(containerId);
    this.failures.push(cause);
    const error = new SandboxCleanupError({ containerIds: [containerId], causes: [cause] });
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

  /**
   * Waits for every removal started so far; rejects with one `SandboxCleanupError` naming
   * every container that could not be removed since the last call.
   */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
    if (this.failedIds.length > 0) {
      const error = new SandboxCleanupError({
        containerIds: this.failedIds,
        causes: this.failures,
      });
      this.failedIds = [];
      this.failures = [];
      throw error;
    }
  }
}
