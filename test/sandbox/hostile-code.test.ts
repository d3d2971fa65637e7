import { DockerSandbox } from '../../src/sandbox/index.ts';
import { hostileCodeTests } from './hostile-code-suite.ts';
import { describeSandbox, docker, suiteSandbox } from './sandbox-availability.ts';

describeSandbox('DockerSandbox under gVisor: hostile code is contained', () => {
  let sandbox: DockerSandbox;

  suiteSandbox({ warmPoolSize: 1, preimport: [] }, created => {
    sandbox = created;
  });

  hostileCodeTests({ sandbox: () => sandbox, docker });
});
