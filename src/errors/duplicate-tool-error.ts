import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltDuplicateToolError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * `add` was given a tool whose name is already indexed. Use `upsert` to
 * replace tools, or namespace names by server.
 *
 * @example
 * ```ts
 * if (DuplicateToolError.isInstance(error)) console.error(error.toolName);
 * ```
 */
export class DuplicateToolError extends ToolbeltError {
  private readonly [symbol] = true;
  /** The name that is already taken. */
  readonly toolName: string;

  constructor({ toolName }: { toolName: string }) {
    super({
      name,
      message: `A tool named "${toolName}" is already indexed. Use upsert() to replace it.`,
    });
    this.toolName = toolName;
  }

  static override isInstance(error: unknown): error is DuplicateToolError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
