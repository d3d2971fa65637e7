import Docker from 'dockerode';
import { afterAll, expect, it } from 'vitest';
import { DockerSandbox, SandboxCleanupError } from '../../src/sandbox/index.ts';
import {
  SANDBOX_IMAGE,
  describeSandbox,
  docker,
  expectNoLeakedContainers,
} from './sandbox-availability.ts';

/** A Docker client on the real engine whose removals of the containers it made fail. */
class FailingRemovals extends Docker {
  readonly made = new Set<string>();
  readonly attempted: string[] = [];
  private failing(container: Docker.Container): Docker.Container {
    container.remove = (async () => {
      this.attempted.push(container.id);
      throw Object.assign(new Error('(HTTP code 500) server error - device busy'), {
        statusCode: 500,
      });
    }) as Docker.Container['remove'];
    return container;
  }
  override async createContainer(options: Docker.ContainerCreateOptions) {
    const container = await super.createContainer(options);
    this.made.add(container.id);
    return this.failing(container);
  }
  override getContainer(id: string) {
    const container = super.getContainer(id);
    return this.made.has(id) ? this.failing(container) : container;
  }
}

describeSandbox('failed container removal', () => {
  const failing = new FailingRemovals();

  afterAll(async () => {
    for (const id of failing.made) {
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
      preimport: [],
    });
    const result = await sandbox.execute('print("ok")');
    expect(result).toMatchObject({ status: 'success', stdout: 'ok\n' });
    const closing = await sandbox.close().catch((e: unknown) => e);
    expect(SandboxCleanupError.isInstance(closing)).toBe(true);
    const [id] = failing.made;
    // Reported once by close(), although its removal was tried twice (after the run, and
    // by close's sweep of the instance's containers).
    expect((closing as SandboxCleanupError).containerIds).toEqual([id]);
    expect(failing.attempted).toEqual([id, id]);
    expect((closing as SandboxCleanupError).message).toContain('device busy');
    expect((closing as SandboxCleanupError).causes[0]).toMatchObject({
      reason: 'engine-error',
      statusCode: 500,
      engine: 'unix:///var/run/docker.sock',
    });
    expect(new Set(reported.map(error => error.containerIds[0]))).toEqual(new Set([id]));
  });
});
