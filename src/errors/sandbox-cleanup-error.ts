import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltSandboxCleanupError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * One or more sandbox containers could not be removed. The containers carry
 * the `ai-toolbelt.sandbox` label, so the next sandbox's start-up sweep (or
 * `docker rm -f`) removes them; their TTL wrapper stops them in any case.
 *
 * @example
 * ```ts
 * try { await sandbox.close() } catch (error) {
 *   if (SandboxCleanupError.isInstance(error)) console.error(error.containerIds);
 * }
 * ```
 */
export class SandboxCleanupError extends ToolbeltError {
  private readonly [symbol] = true;
  /** The containers that were not removed. */
  readonly containerIds: string[];
  /** The underlying failures, one per container. */
  readonly causes: unknown[];

  constructor({ containerIds, causes }: { containerIds: string[]; causes: unknown[] }) {
    const first = (causes[0] instanceof Error ? causes[0].message : String(causes[0])).replace(
      /\.\s*$/,
      '',
    );
    super({
      name,
      message:
        `Could not remove ${containerIds.length} sandbox container(s) ` +
        `(${containerIds.map(id => id.slice(0, 12)).join(', ')}): ${first}. ` +
        'Remove them with `docker rm -f` or let the next sandbox start-up sweep them.',
      cause: causes[0],
    });
    this.containerIds = containerIds;
    this.causes = causes;
  }

  static override isInstance(error: unknown): error is SandboxCleanupError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
