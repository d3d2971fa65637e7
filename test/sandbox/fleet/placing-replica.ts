// A replica for test/sandbox/conversation/bounds/redis-bounds.test.ts: its own process and
// DockerSandbox sharing the test's Redis store and scope, with room for one interpreter. It prints
// its instance id, then places one conversation interpreter (with the default pre-imports, so the
// start takes seconds after the container exists) and waits to be killed.
import { createStorage } from 'unstorage';
import redisDriver from 'unstorage/drivers/redis';
import { DockerSandbox } from '../../../src/sandbox/index.ts';

const [url, key, scope] = process.argv.slice(2) as [string, string, string];
const store = createStorage({ driver: redisDriver({ url }) });
const sandbox = await DockerSandbox.create({
  image: process.env.AI_TOOLBELT_SANDBOX_IMAGE,
  warmPoolSize: 0,
  scope,
  conversations: {
    store,
    encryptionKey: key,
    warmPoolSize: 0,
    maxInterpreters: 1,
    maxPerEngine: 1,
  },
});
process.stdout.write(`${sandbox.instanceId}\n`);
await sandbox.executeCell('print(1)', { conversation: { id: 'doomed', userId: 'zed' } });
// Killed before this; should the start finish first, the test fails on what it then sees.
await new Promise(() => {});
