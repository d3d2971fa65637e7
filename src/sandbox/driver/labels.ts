import { hostname } from 'node:os';

/**
 * Every sandbox container carries this label; `docker ps -a --filter label=ai-toolbelt.sandbox`
 * finds them.
 *
 * @example
 * ```ts
 * const all = await docker.listContainers({ all: true, filters: { label: [SANDBOX_LABEL] } });
 * ```
 */
export const SANDBOX_LABEL = 'ai-toolbelt.sandbox';
/**
 * The random id of the `DockerSandbox` instance that made the container. Ownership is decided
 * by this label and the expiry, never by host name or PID: replicas on container platforms
 * share host name patterns and each has its own PID namespace.
 *
 * @example
 * ```ts
 * const mine = await docker.listContainers({ all: true, filters: { label: [`${INSTANCE_LABEL}=${sandbox.instanceId}`] } });
 * ```
 */
export const INSTANCE_LABEL = 'ai-toolbelt.sandbox.instance';
/**
 * The `scope` option of the sandbox that made the container, when it has one: sweeps of a
 * scoped sandbox consider only containers of its scope, and unscoped sandboxes leave scoped
 * containers alone.
 *
 * @example
 * ```ts
 * const ours = await docker.listContainers({ all: true, filters: { label: [`${SCOPE_LABEL}=billing`] } });
 * ```
 */
export const SCOPE_LABEL = 'ai-toolbelt.sandbox.scope';
/** Host name of the process that made the container (informational only). */
export const HOST_LABEL = 'ai-toolbelt.sandbox.host';
/** PID of the process that made the container (informational only; PIDs repeat across namespaces). */
export const PID_LABEL = 'ai-toolbelt.sandbox.pid';
/** Epoch ms after which the TTL wrapper has killed the container. */
export const EXPIRES_LABEL = 'ai-toolbelt.sandbox.expires';
/** `execute`, `session` or `conversation`. */
export const KIND_LABEL = 'ai-toolbelt.sandbox.kind';
/**
 * The placement an interpreter was started under: while it starts, a count of live interpreters
 * sees both the container and the placement's reservation, and counts them once.
 */
export const PLACEMENT_LABEL = 'ai-toolbelt.sandbox.placement';

/**
 * The shared warm pool a waiting box belongs to (a key of its image, limits and start-up), on
 * engines whose boxes any replica can claim: taking one removes the label in one conditional
 * update.
 */
export const POOL_LABEL = 'ai-toolbelt.sandbox.pool';
/** Set on a waiting box once its pre-imports are done (takers prefer those). */
export const READY_LABEL = 'ai-toolbelt.sandbox.ready';

/**
 * What a sandbox container is for: one run (`execute`), an `Experimental_SandboxSession`
 * (`session`) or a conversation's long-lived interpreter (`conversation`).
 *
 * @example
 * ```ts
 * const kind: ContainerKind = 'conversation';
 * ```
 */
export type ContainerKind = 'execute' | 'session' | 'conversation';

/** The labels for a container made by this process that lives at most `ttlMs`. */
export function containerLabels({
  ttlMs,
  kind,
}: {
  ttlMs: number;
  kind: ContainerKind;
}): Record<string, string> {
  return {
    [SANDBOX_LABEL]: '1',
    [HOST_LABEL]: hostname(),
    [PID_LABEL]: String(process.pid),
    [EXPIRES_LABEL]: String(Date.now() + ttlMs),
    [KIND_LABEL]: kind,
  };
}

/**
 * Whether a sandbox box is past use: its expiry label has passed by more than `clockSkewMs` (its
 * TTL wrapper has killed it, so whoever made it no longer uses it), or it is a conversation
 * interpreter that stopped (idle expiry, killed: never started again). Only boxes of `scope` are
 * considered (without one: boxes of no scope). Never judged by host name or PID.
 *
 * @example
 * ```ts
 * const stale = boxes.filter(box => isStale({ labels: box.labels, exited: box.state === 'exited', now: Date.now(), clockSkewMs: 60_000 }));
 * ```
 */
export function isStale({
  labels,
  exited,
  now,
  clockSkewMs,
  scope,
}: {
  /** The box's labels. */
  labels: Record<string, string>;
  /** It has stopped. */
  exited: boolean;
  /** The time to judge by, epoch ms. */
  now: number;
  /** Allowance for the clocks of hosts sharing the engine. */
  clockSkewMs: number;
  /** The sweeping sandbox's scope. */
  scope?: string | undefined;
}): boolean {
  // Engines cannot filter on a missing label: unscoped sweeps skip scoped boxes here.
  if (labels[SCOPE_LABEL] !== scope) return false;
  const expires = Number(labels[EXPIRES_LABEL]);
  // A conversation interpreter that stopped is never started again: the next cell of its
  // conversation restores into a new one.
  const stopped = labels[KIND_LABEL] === 'conversation' && exited;
  return stopped || (Number.isFinite(expires) && expires + clockSkewMs < now);
}
