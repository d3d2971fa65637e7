// The sandbox contract. Kept free of dockerode so that code typed against it (the python tool,
// tests with fakes) never loads Docker client code.
import type { ChartData } from './chart-types.ts';

/**
 * How a run ended. Only `success` and `error` come from the code itself (its exit
 * status); the others are observed by the host:
 * - `timeout`: still running at `timeoutMs`; the container was killed.
 * - `oom`: killed by the memory limit.
 * - `output-limit`: printed more than the per-stream cap, or returned more images, files,
 *   artifact bytes or notes than the caps (see `notes`); the container was killed.
 * - `crashed`: died without reporting, e.g. killed by a signal, or the gVisor sandbox
 *   itself ended (a fork bomb does that: exit 2, no output).
 *
 * @example
 * ```ts
 * const retryable = (status: SandboxStatus) => status === 'error' || status === 'timeout';
 * ```
 */
export type SandboxStatus = 'success' | 'error' | 'timeout' | 'oom' | 'output-limit' | 'crashed';

/**
 * The outcome of one `execute` call. Failures of the user's code are results, not
 * exceptions.
 *
 * @example
 * ```ts
 * const result = await sandbox.execute('print(1 / 0)');
 * if (result.status === 'error') console.log(result.stderr); // ZeroDivisionError ...
 * ```
 */
export type SandboxResult = {
  /** How the run ended. */
  status: SandboxStatus;
  /** The process's exit code; `null` when the host killed it (`timeout`, `output-limit`). */
  exitCode: number | null;
  /** Everything the code printed to stdout, up to the cap. */
  stdout: string;
  /** Everything the code printed to stderr, up to the cap (tracebacks land here). */
  stderr: string;
  /** True when either stream was cut at the cap, or a cap on returned records ended the run. */
  truncated: boolean;
  /** Wall-clock time from sending the code to knowing the outcome. */
  durationMs: number;
  /**
   * Figures the code left open or showed with `plt.show()`, as PNG, in the order they were
   * made (at most `maxImages`).
   */
  images: SandboxImage[];
  /** Regular files the code wrote under /tmp/outputs (at most `maxOutputFiles`). */
  files: SandboxFile[];
  /**
   * What the caps left out, e.g. `30 figures were made; only the first 10 were returned`,
   * and with an egress policy the connections made and refused.
   */
  notes: string[];
  /** What the run did on the network; only with an `egress` policy. */
  network?: SandboxNetworkUsage;
};

/**
 * A figure the code drew, rendered as PNG. Width and height are read from the PNG itself.
 *
 * @example
 * ```ts
 * for (const image of result.images) writeFileSync(image.name, image.data);
 * ```
 */
export type SandboxImage = {
  /** `figure-1.png`, `figure-2.png`, ... */
  name: string;
  /** Always `image/png`. */
  mediaType: 'image/png';
  /** Pixels. */
  width: number;
  /** Pixels. */
  height: number;
  /** The PNG's bytes. */
  data: Uint8Array;
  /** Its chart as data (type, title, axes, series), for a conversation cell's matplotlib figure. */
  chart?: ChartData;
};

/**
 * A file the code wrote under /tmp/outputs.
 *
 * @example
 * ```ts
 * const csv = result.files.find(file => file.path === 'outputs/summary.csv');
 * ```
 */
export type SandboxFile = {
  /** Path relative to /tmp, e.g. `outputs/summary.csv`. */
  path: string;
  /** Guessed from the file name (`text/csv`); `application/octet-stream` when unknown. */
  mediaType: string;
  /** The file's bytes. */
  data: Uint8Array;
};

/**
 * A file placed in the sandbox before the code runs.
 *
 * @example
 * ```ts
 * const file: SandboxInputFile = { path: 'inputs/sales.csv', data: 'region,amount\nnorth,3\n' };
 * ```
 */
export type SandboxInputFile = {
  /** Relative to /tmp (`inputs/sales.csv`), or absolute under /tmp; no `..`. */
  path: string;
  /** Contents; strings are written as UTF-8. */
  data: Uint8Array | string;
};

/**
 * A piece of output, delivered while the code runs.
 *
 * @example
 * ```ts
 * const onOutput = ({ stream, text }: SandboxOutputChunk) => process[stream].write(text);
 * ```
 */
export type SandboxOutputChunk = {
  /** Which stream the text came from. */
  stream: 'stdout' | 'stderr';
  /** The decoded text (never splits a UTF-8 character). */
  text: string;
};

/**
 * Options of one `execute` call.
 *
 * @example
 * ```ts
 * const options: SandboxExecuteOptions = { timeoutMs: 5_000, abortSignal: AbortSignal.timeout(60_000) };
 * ```
 */
export type SandboxExecuteOptions = {
  /** Wall-clock limit; at the limit the container is killed and the status is `timeout`. */
  timeoutMs?: number;
  /** Aborting kills the run and rejects with the signal's reason. */
  abortSignal?: AbortSignal;
  /** Called with output as it arrives (after the run starts, before it ends). */
  onOutput?: (chunk: SandboxOutputChunk) => void;
  /** Files written under /tmp before the code runs (e.g. a CSV the user attached). */
  files?: readonly SandboxInputFile[];
};

/**
 * Runs untrusted Python code in isolation, one fresh interpreter per call.
 * `DockerSandbox` (from `ai-toolbelt/sandbox`) implements it with Docker + gVisor.
 *
 * @example
 * ```ts
 * async function run(sandbox: Sandbox) {
 *   const { status, stdout } = await sandbox.execute('print(6 * 7)', { timeoutMs: 5_000 });
 *   return status === 'success' ? stdout : undefined;
 * }
 * ```
 */
export interface Sandbox extends AsyncDisposable {
  /**
   * Runs `code` and resolves with its outcome. Throws only for bad arguments
   * (`InvalidArgumentError`, `CodeTooLargeError`), a closed sandbox
   * (`SandboxClosedError`), infrastructure failures (`SandboxUnavailableError`,
   * `SandboxRuntimeMissingError`, `DockerTimeoutError`, `SandboxCleanupError`) and aborts.
   */
  execute(code: string, options?: SandboxExecuteOptions): Promise<SandboxResult>;
  /** Stops accepting work, removes every container, and reports removal failures. */
  close(): Promise<void>;
}

/**
 * Whose conversation a cell belongs to: the app's conversation id (e.g. `useChat`'s chat id)
 * and the signed-in user's id. An interpreter is bound to its user: another user's request
 * with the same conversation id gets an interpreter of its own.
 *
 * @example
 * ```ts
 * const conversation: SandboxConversation = { id: body.id, userId: session.user.id };
 * ```
 */
export type SandboxConversation = {
  /** The conversation (chat) id. */
  id: string;
  /** The user the conversation belongs to. */
  userId: string;
};

/**
 * Options of one `executeCell` call: those of `execute` plus the conversation. Input files
 * are placed once: a file sent again unchanged is not sent again.
 *
 * @example
 * ```ts
 * const options: SandboxCellOptions = { conversation: { id: chatId, userId }, timeoutMs: 10_000 };
 * ```
 */
export type SandboxCellOptions = SandboxExecuteOptions & {
  /** The conversation whose interpreter runs the cell. */
  conversation: SandboxConversation;
  /** Called with each value the cell shows, as it shows it (checked and capped as in `results`). */
  onResult?: (result: SandboxDisplayResult) => void;
};

/**
 * How a lost interpreter was rebuilt before a cell: the conversation's earlier successful
 * cells were run again (`replay`), in order, in a new interpreter, with its input files.
 *
 * @example
 * ```ts
 * if (result.restored) console.log(result.restored.summary); // state restored by re-running 4 earlier cells
 * ```
 */
export type InterpreterRestore = {
  /** Always `replay` (gVisor checkpoints do not survive Docker here; see docs/sandbox.md). */
  method: 'replay';
  /** Why the interpreter was gone: idle expiry, stopped (killed, crashed, out of memory, evicted) or its engine is unreachable. */
  reason: 'idle' | 'stopped' | 'engine';
  /** Earlier cells that ran again successfully. */
  cells: number;
  /** Earlier cells that failed when run again (what they defined is missing). */
  failed: Array<{ cell: number; status: SandboxStatus; error: string }>;
  /** Earlier cells not kept for restoring (over `maxHistoryBytes`). */
  dropped: number;
  /** Earlier cells not re-run because the restore would have passed `replayDeadlineMs`. */
  notRerun: number;
  /** Input files that could not be put back (not kept, or expired). */
  missingFiles: string[];
  /** Time spent restoring. */
  ms: number;
  /** One line for the model, e.g. `state restored by re-running 4 earlier cells`. */
  summary: string;
};

/**
 * The outcome of one cell: a `SandboxResult` plus the cell's number and, when the
 * interpreter had been lost, how its state was restored.
 *
 * @example
 * ```ts
 * const result = await sandbox.executeCell('print(df.shape)', { conversation });
 * ```
 */
export type SandboxCellResult = SandboxResult & {
  /** The cell's number in the conversation, from 1. */
  cell: number;
  /**
   * The values the cell showed, in order: its last expression (`main`, unless it was an
   * assignment or ended with `;`) and every `display()` call, each as a MIME bundle.
   */
  results?: SandboxDisplayResult[];
  /**
   * The cell passed its `timeoutMs` and was interrupted (a KeyboardInterrupt) but its
   * interpreter lives on, variables kept (status `timeout`). A cell that did not stop within the
   * grace is killed instead: then `ended` is set.
   */
  interrupted?: true;
  /** Set when the interpreter was rebuilt before this cell. */
  restored?: InterpreterRestore;
  /**
   * Set when this cell ended the interpreter (timeout, out of memory, crash, output limit): the
   * line the model reads, that its variables are gone and what the next cell restores.
   */
  ended?: string;
};

/**
 * A sandbox that keeps one live interpreter per conversation (`DockerSandbox` does): cells of
 * the same conversation share globals, imports and files under /tmp.
 *
 * @example
 * ```ts
 * await sandbox.executeCell('import pandas as pd; df = pd.read_csv("/tmp/inputs/a.csv")', { conversation });
 * const { stdout } = await sandbox.executeCell('print(len(df))', { conversation });
 * ```
 */
export interface ConversationSandbox {
  /** Runs `code` as the next cell of the conversation's interpreter (started or restored as needed). */
  executeCell(code: string, options: SandboxCellOptions): Promise<SandboxCellResult>;
}

/**
 * A value a cell showed, as a MIME bundle (Jupyter's): `text/plain` always; the rest when the
 * object offers them through its `_repr_*_` methods. Everything here came from the sandboxed
 * code: HTML, SVG and markdown are attacker-controlled and must go through a sanitiser before
 * a page renders them.
 */
export type SandboxMimeBundle = {
  /** `repr()` of the value, cut like stdout. */
  'text/plain': string;
  /** e.g. a pandas DataFrame's table. Untrusted HTML. */
  'text/html'?: string;
  /** Untrusted markdown. */
  'text/markdown'?: string;
  /** Untrusted SVG (it can carry scripts). */
  'image/svg+xml'?: string;
  /** PNG, base64 (checked to decode as a PNG). */
  'image/png'?: string;
  /** JPEG, base64 (checked for the JPEG signature). */
  'image/jpeg'?: string;
  /** LaTeX source. */
  'text/latex'?: string;
  /** Any JSON value. */
  'application/json'?: unknown;
};

/**
 * One value a cell showed: its last expression (`main`) or a `display()` call, in order.
 *
 * @example
 * ```ts
 * const table = result.results?.find(r => r.main)?.data['text/html'];
 * ```
 */
export type SandboxDisplayResult = {
  /** The value of the cell's last expression (at most one per cell). */
  main: boolean;
  /** The value's representations. */
  data: SandboxMimeBundle;
  /** A matplotlib figure shown this way: its chart as data (see `ChartData`). */
  chart?: ChartData;
};

/**
 * Why the egress proxy refused or cut a connection:
 * - `not-allowed`: the host and port are not on `egress.allow`;
 * - `private-address`: the name resolved to a non-public address its rule does not allow
 *   (loopback, private, link-local, ...);
 * - `unresolvable`: the name did not resolve;
 * - `connect-failed`: the allowed address did not answer in time or refused;
 * - `too-many-connections`: `maxConnections` at once or `maxConnectionsPerRun` reached;
 * - `byte-limit`: the run moved `maxBytesPerRun`; its connections were cut;
 * - `bad-request`: not a CONNECT or an absolute-form http:// request the proxy understands.
 *
 * @example
 * ```ts
 * const blocked = (reason: EgressRefusalReason) => reason === 'not-allowed' || reason === 'private-address';
 * ```
 */
export type EgressRefusalReason =
  | 'not-allowed'
  | 'private-address'
  | 'unresolvable'
  | 'connect-failed'
  | 'too-many-connections'
  | 'byte-limit'
  | 'bad-request';

/**
 * One connection the proxy refused or cut.
 *
 * @example
 * ```ts
 * const line = (r: EgressRefusal) => `${r.host}:${r.port} ${r.reason}`;
 * ```
 */
export type EgressRefusal = {
  /** The host the code asked for: a host name or IP only, never a path, query or credentials. */
  host: string;
  /** The port it asked for (0 when the request could not be read). */
  port: number;
  reason: EgressRefusalReason;
  /** A sentence for people and models, e.g. "resolves to 127.0.0.1, a loopback address". */
  detail: string;
};

/**
 * What a run or cell did on the network (present only when the sandbox has an egress policy).
 *
 * @example
 * ```ts
 * if (result.network && result.network.refused.length > 0) console.warn(result.network.refused);
 * ```
 */
export type SandboxNetworkUsage = {
  /** Connections made (tunnels and forwarded requests). */
  connections: number;
  /** Bytes the code sent out, and received. */
  bytesSent: number;
  bytesReceived: number;
  /** `host:port` of every connection made, in first-use order. */
  hosts: string[];
  /** Refused or cut connections (at most 20; `refusedCount` counts them all). */
  refused: EgressRefusal[];
  refusedCount: number;
};
