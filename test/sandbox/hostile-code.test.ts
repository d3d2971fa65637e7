import { afterAll, beforeAll } from 'vitest';
import { DockerSandbox } from '../../src/sandbox/index.ts';
import { hostileCodeTests } from './hostile-code-suite.ts';
import {
  SANDBOX_IMAGE,
  describeSandbox,
  docker,
  expectNoLeakedContainers,
} from './sandbox-availability.ts';

describeSandbox('DockerSandbox under gVisor: hostile code is contained', () => {
  let sandbox: DockerSandbox;

  beforeAll(async () => {
    sandbox = await DockerSandbox.create({
      image: SANDBOX_IMAGE,
      docker,
      warmPoolSize: 1,
      preimport: [],
    });
  });

  afterAll(async () => {
    await sandbox?.close();
    await expectNoLeakedContainers();
  });

  hostileCodeTests({ sandbox: () => sandbox, docker });
});
