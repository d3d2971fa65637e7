import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { SandboxBusyError } from '../../errors/sandbox-busy-error.ts';
import { dockerCall } from '../docker/docker-call.ts';
import type { Engine } from '../engines/engine.ts';
import { isTransportError } from '../docker/engine-errors.ts';
import type { EngineSet } from '../engines/engine-set.ts';
import { KIND_LABEL, SANDBOX_LABEL, SCOPE_LABEL } from '../docker/labels.ts';
import type { ResolvedConversationOptions } from '../options/conversation-options.ts';
import { startInterpreter } from './interpreter-container.ts';

/** What this process knows of an interpreter it used: for least-recently-used eviction. */
export type KnownInterpreter = { usedAt: number; busy: boolean };

/** A started interpreter and where it runs. */
export type PlacedInterpreter = {
  engine: Engine;
  container: Docker.Container;
  secret: string;
  startedAt: number;
};

/**
 * A new interpreter for a conversation on the healthy engine with the least work: a waiting
 * one from `pool` when there is one, else started now. Within the bounds: at most
 * `maxInterpreters` live in all and `maxPerEngine` per engine (counted from the engines'
 * labels, so every replica's interpreters count). Past the per-engine bound the least recently
 * used idle interpreter there is removed (its conversation is restored when it goes on); past
 * the total bound, or with nothing to evict, it throws `SandboxBusyError` (`interpreters`). If
 * an engine does not answer, another is tried.
 *
 * @example
 * ```ts
 * const placed = await placeInterpreter({ engines, options, preimport, pool, known, dockerTimeoutMs: 15_000 });
 * ```
 */
export async function placeInterpreter({
  engines,
  options,
  preimport,
  pool,
  known,
  dockerTimeoutMs,
  abortSignal,
}: {
  /** Where interpreters may go. */
  engines: EngineSet;
  /** Bounds and limits. */
  options: ResolvedConversationOptions;
  /** Modules imported before the first cell. */
  preimport: readonly string[];
  /** Interpreters waiting for a conversation (an `InterpreterPool`: by shape, so neither file imports the other). */
  pool: { take(engine: Engine): Promise<PlacedInterpreter | undefined> };
  /** Interpreters this process used, by container id (eviction order; busy ones are spared). */
  known: ReadonlyMap<string, KnownInterpreter>;
  /** Deadline of each Docker call. */
  dockerTimeoutMs: number;
  /** Aborting stops the start. */
  abortSignal?: AbortSignal | undefined;
}): Promise<PlacedInterpreter> {
  const tried = new Set<Engine>();
  for (;;) {
    abortSignal?.throwIfAborted();
    const engine = await engines.pickForSession(tried);
    try {
      const warm = await pool.take(engine);
      if (warm !== undefined) return warm;
      await makeRoom({ engines, engine, options, known, dockerTimeoutMs });
      const secret = randomBytes(16).toString('hex');
      const limits = engine.limits!;
      const container = await startInterpreter({
        docker: engine.docker,
        limits: {
          ...limits,
          memoryBytes: options.memoryBytes,
          pidsLimit: options.pidsLimit,
          tmpfsMiB: options.tmpfsMiB,
        },
        labels: {},
        ...{ secret, preimport, dockerTimeoutMs, abortSignal },
        ttlMs: options.maxLifeMs,
        idleMs: options.idleMs,
        startTimeoutMs: options.startTimeoutMs,
        cleanup: engine.cleanup,
      });
      return { engine, container, secret, startedAt: Date.now() };
    } catch (error) {
      abortSignal?.throwIfAborted();
      if (SandboxBusyError.isInstance(error)) throw error;
      tried.add(engine);
      const others = engines.engines.some(other => other.state === 'up' && !tried.has(other));
      if (!isTransportError(error) || !others) throw engine.toError(error);
    }
  }
}

/**
 * Whether one more interpreter fits on `engine` under `maxInterpreters` and `maxPerEngine`
 * without evicting one: the pool asks before it starts a waiting interpreter, so waiting ones
 * never push live conversations out or past the bounds.
 *
 * @example
 * ```ts
 * if (await hasRoom({ engines, engine, options, dockerTimeoutMs: 15_000 })) startOne();
 * ```
 */
export async function hasRoom({
  engines,
  engine,
  options,
  dockerTimeoutMs,
}: {
  /** Every engine (the total bound counts them all). */
  engines: EngineSet;
  /** Where it would start. */
  engine: Engine;
  /** The bounds. */
  options: ResolvedConversationOptions;
  /** Deadline of each Docker call. */
  dockerTimeoutMs: number;
}): Promise<boolean> {
  const { all, here } = await countLive({ engines, engine, dockerTimeoutMs });
  return all.length < options.maxInterpreters && here.length < options.maxPerEngine;
}

/** Live interpreters on every healthy engine, and those on `engine`. */
async function countLive({
  engines,
  engine,
  dockerTimeoutMs,
}: {
  engines: EngineSet;
  engine: Engine;
  dockerTimeoutMs: number;
}) {
  const up = engines.engines.filter(candidate => candidate.state === 'up');
  const lists = await Promise.all(
    up.map(async candidate => ({
      engine: candidate,
      live: await liveInterpreters(candidate, dockerTimeoutMs),
    })),
  );
  const all = lists.flatMap(({ engine: owner, live }) => live.map(info => ({ owner, info })));
  return { all, here: all.filter(({ owner }) => owner === engine) };
}

/** Removes the least recently used idle interpreter where an engine is full; throws when none can go. */
async function makeRoom({
  engines,
  engine,
  options,
  known,
  dockerTimeoutMs,
}: {
  engines: EngineSet;
  engine: Engine;
  options: ResolvedConversationOptions;
  known: ReadonlyMap<string, KnownInterpreter>;
  dockerTimeoutMs: number;
}): Promise<void> {
  const { all, here } = await countLive({ engines, engine, dockerTimeoutMs });
  if (all.length >= options.maxInterpreters) {
    throw new SandboxBusyError({ resource: 'interpreters', limit: options.maxInterpreters });
  }
  if (here.length < options.maxPerEngine) return;
  const victim = leastRecentlyUsed(here, known);
  if (victim === undefined) {
    throw new SandboxBusyError({ resource: 'interpreters', limit: options.maxPerEngine });
  }
  // Removed, not just stopped: its conversation is restored in a new one when it goes on.
  await victim.owner.cleanup.remove(victim.owner.docker.getContainer(victim.info.Id));
}

/** The idle interpreter used longest ago (by this process's record, else the oldest started). */
function leastRecentlyUsed<T extends { info: Docker.ContainerInfo }>(
  group: readonly T[],
  known: ReadonlyMap<string, KnownInterpreter>,
): T | undefined {
  const candidates = group.filter(({ info }) => known.get(info.Id)?.busy !== true);
  const lastUse = ({ info }: T) => known.get(info.Id)?.usedAt ?? info.Created * 1000;
  return candidates.sort((a, b) => lastUse(a) - lastUse(b))[0];
}

/**
 * Running conversation interpreters on an engine (any replica's). A sandbox with a `scope`
 * counts its scope's only: the bounds are the app's, and an engine may serve several apps.
 */
async function liveInterpreters(
  engine: Engine,
  dockerTimeoutMs: number,
): Promise<Docker.ContainerInfo[]> {
  const scope = engine.limits?.labels?.[SCOPE_LABEL];
  const label = [SANDBOX_LABEL, `${KIND_LABEL}=conversation`];
  if (scope !== undefined) label.push(`${SCOPE_LABEL}=${scope}`);
  return await dockerCall({
    operation: 'container list',
    timeoutMs: dockerTimeoutMs,
    call: abortSignal =>
      engine.docker.listContainers({
        filters: { label, status: ['created', 'running'] },
        abortSignal,
      }),
  });
}
