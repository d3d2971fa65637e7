import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { SandboxUnavailableError } from '../../errors/sandbox-unavailable-error.ts';
import type { BoxInfo, BoxState } from '../driver/engine-driver.ts';
import { CONTAINER } from './pod-spec.ts';

// Waiting reasons that mean the image cannot be had.
const IMAGE_MISSING = new Set([
  'ErrImageNeverPull',
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
]);
// Waiting reasons that mean the container cannot be made as asked.
const CANNOT_CREATE = new Set([
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

function status(pod: V1Pod): V1ContainerStatus | undefined {
  return pod.status?.containerStatuses?.find(found => found.name === CONTAINER);
}

/**
 * A pod's state as the sandbox reads a box's: running while its container runs and the pod is
 * not being deleted; starting while it is pending; its exit code and whether the OOM killer
 * ended it once its container terminated (a pod ended at `activeDeadlineSeconds` counts as
 * killed, 137).
 *
 * @example
 * ```ts
 * const state = podState(await core.readNamespacedPod({ name, namespace }));
 * ```
 */
export function podState(pod: V1Pod): BoxState {
  const container = status(pod);
  const terminated = container?.state?.terminated;
  const deleting = pod.metadata?.deletionTimestamp !== undefined;
  const phase = pod.status?.phase;
  const ended = terminated !== undefined || phase === 'Succeeded' || phase === 'Failed';
  const exitCode = terminated?.exitCode ?? (ended ? 137 : null);
  return {
    running: !ended && !deleting && container?.state?.running !== undefined,
    starting: !ended && !deleting && phase === 'Pending',
    exitCode: ended ? exitCode : null,
    oomKilled: terminated?.reason === 'OOMKilled',
    labels: pod.metadata?.labels ?? {},
  };
}

/** A pod as a listing shows a box. */
export function podInfo(pod: V1Pod): BoxInfo {
  const state = podState(pod);
  return {
    id: pod.metadata?.name ?? '',
    labels: pod.metadata?.labels ?? {},
    state: state.running
      ? 'running'
      : state.starting
        ? 'starting'
        : state.exitCode === null
          ? 'stopping'
          : 'exited',
    createdMs: new Date(pod.metadata?.creationTimestamp ?? 0).getTime(),
    ...(pod.metadata?.resourceVersion === undefined
      ? {}
      : { version: pod.metadata.resourceVersion }),
    source: pod,
  };
}

/**
 * Whether a starting pod is up (its container runs), or why it never will be: gone, ended
 * before it was attached, no image, a container that cannot be made. Undefined: still starting
 * (`lastWait` then says what it waits for, for the timeout's message).
 */
export function startOutcome({
  pod,
  engine,
  image,
}: {
  pod: V1Pod | undefined;
  engine: string;
  image: string;
}): { value: true } | { waiting: string } {
  if (pod === undefined) {
    throw new SandboxUnavailableError({
      reason: 'engine-error',
      engine,
      message: `The sandbox pod was deleted on ${engine} while it started.`,
    });
  }
  const state = podState(pod);
  if (state.running) return { value: true };
  const container = status(pod);
  const waiting = container?.state?.waiting;
  if (waiting?.reason !== undefined && IMAGE_MISSING.has(waiting.reason)) {
    throw new SandboxUnavailableError({
      reason: 'image-missing',
      engine,
      message:
        `The nodes of ${engine} cannot get the sandbox image \`${image}\` (${waiting.reason}: ${waiting.message ?? ''}). ` +
        'Push it to a registry the nodes pull from (scripts/setup-sandbox.sh builds it), or pass `image`; ' +
        'with `imagePullPolicy: Never` every node must have it already.',
    });
  }
  if (waiting?.reason !== undefined && CANNOT_CREATE.has(waiting.reason)) {
    throw new SandboxUnavailableError({
      reason: 'engine-error',
      engine,
      message: `The sandbox pod could not start on ${engine}: ${waiting.reason}: ${waiting.message ?? ''}`,
    });
  }
  if (state.exitCode !== null || pod.metadata?.deletionTimestamp !== undefined) {
    const reason = container?.state?.terminated?.reason ?? pod.status?.reason ?? 'deleted';
    throw new SandboxUnavailableError({
      reason: 'engine-error',
      engine,
      message: `The sandbox pod ended on ${engine} before it could be attached (${reason}, exit ${state.exitCode ?? 'none'}).`,
    });
  }
  const unscheduled = pod.status?.conditions?.find(
    condition => condition.type === 'PodScheduled' && condition.status === 'False',
  );
  return {
    waiting:
      unscheduled?.message ??
      waiting?.reason ??
      (pod.status?.phase === 'Pending' ? 'pending' : String(pod.status?.phase)),
  };
}
