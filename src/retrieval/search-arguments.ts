import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import type { ToolDescriptor, ToolFilter } from './types.ts';

/**
 * Checks a search's arguments, naming the one that is wrong.
 *
 * @example
 * ```ts
 * checkSearchArguments({ query: 'weather', topK: 5, mode: 'multi' });
 * ```
 */
export function checkSearchArguments({
  query,
  topK,
  mode,
}: {
  /** The request. */
  query: unknown;
  /** How many hits. */
  topK: unknown;
  /** `single` or `multi`. */
  mode: unknown;
}): void {
  if (typeof query !== 'string') {
    throw new InvalidArgumentError({
      argument: 'query',
      value: query,
      message: 'expected a string',
    });
  }
  if (typeof topK !== 'number' || Number.isNaN(topK)) {
    throw new InvalidArgumentError({ argument: 'topK', value: topK, message: 'expected a number' });
  }
  if (mode !== 'single' && mode !== 'multi') {
    throw new InvalidArgumentError({
      argument: 'mode',
      value: mode,
      message: 'expected "single" or "multi"',
    });
  }
}

/**
 * A slot predicate for a search filter (`{ servers }` or a predicate over the
 * descriptor); undefined when there is no filter.
 *
 * @example
 * ```ts
 * const accept = acceptorFor({ servers: ['github'] }, slot => toolAt(slot));
 * ```
 */
export function acceptorFor(
  filter: ToolFilter | undefined,
  toolAt: (slot: number) => ToolDescriptor,
): ((slot: number) => boolean) | undefined {
  if (filter === undefined) return undefined;
  if (typeof filter === 'function') return slot => filter(toolAt(slot));
  if (filter != null && Array.isArray(filter.servers)) {
    const servers = new Set(filter.servers);
    return slot => servers.has(toolAt(slot).server ?? '');
  }
  throw new InvalidArgumentError({
    argument: 'filter',
    value: filter,
    message: 'expected { servers: string[] } or a predicate',
  });
}
