import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltLocalModelError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/** What went wrong with a local embedding model. */
export type LocalModelErrorReason =
  /** The model folder, or a file it needs, is not there. */
  | 'missing'
  /** A file is there but is not what the model needs (wrong size or hash, unreadable). */
  | 'corrupt'
  /** The optional packages that run it (onnxruntime-node, @huggingface/tokenizers) are missing. */
  | 'runtime-missing'
  /** Fetching it from the package index failed. */
  | 'fetch-failed'
  /** The name is not a model this library knows how to fetch. */
  | 'unknown-model'
  /** The model was closed while a call was waiting for it. */
  | 'closed';

/**
 * A local embedding model could not be loaded or fetched. The message names the folder (or
 * package) and the command that fixes it, e.g. `npx ai-toolbelt fetch-model all-MiniLM-L6-v2`.
 *
 * @example
 * ```ts
 * try {
 *   await embed({ model: localEmbeddingModel(), value: 'weather in Paris' });
 * } catch (error) {
 *   if (LocalModelError.isInstance(error)) console.error(error.path, error.command);
 * }
 * ```
 */
export class LocalModelError extends ToolbeltError {
  private readonly [symbol] = true;
  readonly reason: LocalModelErrorReason;
  /** The model folder or file concerned. */
  readonly path: string | undefined;
  /** The command that fetches or installs what is missing. */
  readonly command: string | undefined;

  constructor({
    reason,
    message,
    path,
    command,
    cause,
  }: {
    reason: LocalModelErrorReason;
    message: string;
    path?: string;
    command?: string;
    cause?: unknown;
  }) {
    super({
      name,
      message: `${message}${command ? ` Run \`${command}\`.` : ''}`,
      cause,
    });
    this.reason = reason;
    this.path = path;
    this.command = command;
  }

  static override isInstance(error: unknown): error is LocalModelError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
