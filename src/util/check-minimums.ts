import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';

/**
 * Checks numeric options against their minimums: each must be a finite number >= its minimum,
 * else `InvalidArgumentError` naming `prefix` + the option (and `minName`, when the minimum is
 * another option's value).
 *
 * @example
 * ```ts
 * checkMinimums([['maxQueued', maxQueued, 0], ['cpus', cpus, 0.01]]);
 * checkMinimums([['idleMs', idleMs, 1_000]], { prefix: 'conversations.' });
 * ```
 */
export function checkMinimums(
  entries: ReadonlyArray<
    readonly [argument: string, value: unknown, min: number, minName?: string]
  >,
  {
    prefix = '',
  }: {
    /** Put before each option's name in errors, e.g. `egress.`. */
    prefix?: string;
  } = {},
): void {
  for (const [argument, value, min, minName] of entries) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
      throw new InvalidArgumentError({
        argument: `${prefix}${argument}`,
        value,
        message: `must be a number >= ${minName === undefined ? min : `${minName} (${min})`}`,
      });
    }
  }
}
