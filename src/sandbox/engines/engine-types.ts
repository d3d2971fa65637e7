/**
 * What sessions and runs need from their engine: its name, typed errors, and word when the
 * engine is lost.
 */
export type EngineLink = {
  /** The engine's name, for errors. */
  readonly name: string;
  /** Maps a failure of a call to this engine into the sandbox's error set (see `toEngineError`). */
  toError(error: unknown, options?: { inFlight?: boolean }): unknown;
  /** Calls `listener` if the engine is taken out; returns an unsubscribe function. */
  onLost(listener: (error: Error) => void): () => void;
};

/**
 * A Docker engine's state as the sandbox sees it.
 *
 * @example
 * ```ts
 * const down = sandbox.engineStatus().filter(engine => engine.state === 'down');
 * ```
 */
export type SandboxEngineStatus = {
  /** The engine's name. */
  name: string;
  /** `up`: taking runs; `down`: not answering (probed with back-off); `starting`, `closed`. */
  state: 'starting' | 'up' | 'down' | 'closed';
  /** Runs placed on it right now. */
  inFlight: number;
  /** Idle warm containers. */
  warm: number;
  /** Open sessions. */
  sessions: number;
  /** Runs it has completed (a result was returned). */
  runs: number;
  /** Why it is down, when it is. */
  lastError?: string;
};
