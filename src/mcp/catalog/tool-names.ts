import { createHash } from 'node:crypto';

const maxLength = 64;

/** How MCP tool names become AI SDK tool names. */
export type McpNaming =
  /** Keep the server's name (sanitised); prefix `server__` only when two tools collide. */
  | 'on-collision'
  /** Always `server__tool`: names never change when another server adds a tool. */
  | 'always';

/**
 * Assigns every (server, tool) pair a unique name valid for every provider
 * (`[a-zA-Z0-9_-]{1,64}`). Deterministic: depends only on the current set, so
 * the same catalog always gets the same names. Returns names in input order.
 *
 * @example
 * ```ts
 * assignToolNames({ tools: [{ server: 'a', name: 'search' }, { server: 'b', name: 'search' }] });
 * // ['a__search', 'b__search']
 * ```
 */
export function assignToolNames({
  tools,
  naming = 'on-collision',
}: {
  /** The tools, with the name their server gave them. */
  tools: readonly { server: string; name: string }[];
  /** See {@link McpNaming}. */
  naming?: McpNaming;
}): string[] {
  const plain = tools.map(tool => sanitize(tool.name));
  const plainCounts = countOf(plain);
  const names = tools.map((tool, i) =>
    naming === 'on-collision' && plainCounts.get(plain[i]!) === 1
      ? plain[i]!
      : fit(`${sanitize(tool.server)}__${plain[i]!}`),
  );
  // Rare leftovers (`a.b` and `a_b` on one server, truncation, a tool literally
  // named `x__y`): suffix a hash of the original pair, which is stable and unique.
  const counts = countOf(names);
  return names.map((candidate, i) => {
    if (counts.get(candidate) === 1) return candidate;
    const tool = tools[i]!;
    return fit(`${candidate.slice(0, maxLength - 9)}_${hash(`${tool.server}\0${tool.name}`, 8)}`);
  });
}

/** Replaces characters providers reject; never returns an empty string. */
export function sanitize(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, '_');
  return fit(cleaned === '' ? 'tool' : cleaned);
}

function fit(name: string): string {
  if (name.length <= maxLength) return name;
  // Truncation alone would merge long names sharing a prefix; the hash keeps them apart.
  return `${name.slice(0, maxLength - 9)}_${hash(name, 8)}`;
}

function hash(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

function countOf(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}
