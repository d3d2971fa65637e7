import type { ToolUsage } from './usage-record.ts';

/**
 * The lexical side of a tool's usage: each term's share of the learned
 * requests that used it (0..1) and the mean request length. The usage field
 * thus reads like one typical request, however many were learned, so a busy
 * tool does not outscore a quiet one on volume alone.
 *
 * @example
 * ```ts
 * usageBag({ requests: [['rain', 'pari'], ['rain']], updatedAt: 0 });
 * // { terms: Map { 'rain' => 1, 'pari' => 0.5 }, length: 1.5 }
 * ```
 */
export function usageBag(usage: ToolUsage | undefined): {
  terms: Map<string, number>;
  length: number;
} {
  const terms = new Map<string, number>();
  const requests = usage?.requests ?? [];
  if (requests.length === 0) return { terms, length: 0 };
  let total = 0;
  for (const request of requests) {
    total += request.length;
    for (const term of new Set(request)) terms.set(term, (terms.get(term) ?? 0) + 1);
  }
  for (const [term, count] of terms) terms.set(term, count / requests.length);
  return { terms, length: total / requests.length };
}
