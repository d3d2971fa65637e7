import { INSTANCE_LABEL, KIND_LABEL, SANDBOX_LABEL } from '../../../src/sandbox/driver/labels.ts';
import type { DockerSandbox } from '../../../src/sandbox/index.ts';
import { docker } from '../sandbox-availability.ts';

/**
 * This sandbox's interpreter containers in `status` (running by default), by their labels: only
 * its instance's, since other test files (and other checkouts) run interpreters on the same
 * engine at the same time.
 */
export async function liveInterpreters(
  sandbox: DockerSandbox,
  status: string[] = ['running'],
): Promise<string[]> {
  const list = await docker.listContainers({
    filters: {
      label: [
        SANDBOX_LABEL,
        `${KIND_LABEL}=conversation`,
        `${INSTANCE_LABEL}=${sandbox.instanceId}`,
      ],
      status,
    },
  });
  return list.map(info => info.Id);
}
