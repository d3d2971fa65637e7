// A second replica of an app for test/sandbox/conversation/conversation.test.ts: its own process and
// DockerSandbox on the same engine, sharing the first one's Redis store and key. It runs one
// cell of the conversation named in its arguments and prints the result as one JSON line.
import { createStorage } from 'unstorage';
import redisDriver from 'unstorage/drivers/redis';
import { DockerSandbox } from '../../../src/sandbox/index.ts';

const [url, key, conversationId, userId, code] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const store = createStorage({ driver: redisDriver({ url }) });
const sandbox = await DockerSandbox.create({
  image: process.env.AI_TOOLBELT_SANDBOX_IMAGE,
  warmPoolSize: 0,
  preimport: [],
  conversations: { store, encryptionKey: key },
});
try {
  const result = await sandbox.executeCell(code, { conversation: { id: conversationId, userId } });
  const { status, stdout, stderr, cell, restored } = result;
  process.stdout.write(
    `${JSON.stringify({ instanceId: sandbox.instanceId, status, stdout, stderr, cell, restored })}\n`,
  );
} finally {
  await sandbox.close();
  await store.dispose();
}
