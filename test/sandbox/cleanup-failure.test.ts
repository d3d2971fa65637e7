import Docker from 'dockerode';
import { afterAll, expect, it } from 'vitest';
import { DockerSandbox, SandboxCleanupError } from '../../src/sandbox/index.ts';
import {
  SANDBOX_IMAGE,
  describeSandbox,
  docker,
  expectNoLeakedContainers,
} from './sandbox-availability.ts';

/** A Docker client whose container removals fail with a server error. */
class FailingRemovals extends Docker {
  readonly attempted: string[] = [];
  override async createContainer(options: Docker.ContainerCreateOptions) {
    const container = await super.createContainer(options);
    container.remove = (async () => {
      this.attempted.push(container.id);
      throw Object.assign(new Error('(HTTP code 500) server error - device busy'), {
        statusCode: 500,
      });
    }) as Docker.Container['remove'];
    return container;
  }
}

describeSandbox('failed container removal', () => {
  const failing = new FailingRemovals();

  afterAll(async () => {
    for (const id of failing.attempted) {
      await docker
        .getContainer(id)
        .remove({ force: true })
        .catch(() => {});
    }
    await expectNoLeakedContainers();
  });

  it('is reported at once and by close(), never swallowed; the result still arrives', async () => {
    const reported: SandboxCleanupError[] = [];
    const sandbox = await DockerSandbox.create({
      docker: failing,
      image: SANDBOX_IMAGE,
      warmPoolSize: 0,
      onCleanupError: error => reported.push(error),
    });
    const result = await sandbox.execute('print("ok")');
    expect(result).toMatchObject({ status: 'success', stdout: 'ok\n' });
    const closing = await sandbox.close().catch((e: unknown) => e);
    expect(SandboxCleanupError.isInstance(closing)).toBe(true);
    expect((closing as SandboxCleanupError).containerIds).toEqual(failing.attempted);
    expect((closing as SandboxCleanupError).message).toContain('device busy');
    expect(reported.map(error => error.containerIds[0])).toEqual(failing.attempted);
  });
});
