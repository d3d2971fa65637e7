// A container's proxy goes with the container, however it is removed (issue 45, item 4), and
// only the container (and this process) can open it (item 2), on the real engine (Docker +
// gVisor, runtime runsc-egress). The only server is this test's own on loopback, reached by a
// name only the test's resolver knows. A scope keeps this suite's sweeps to its own containers.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStorage } from 'unstorage';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DockerSandbox } from '../../../src/sandbox/index.ts';
import {
  SANDBOX_IMAGE,
  describeSandbox,
  docker,
  expectNoLeakedContainers,
} from '../sandbox-availability.ts';

describeSandbox('egress: a proxy lives as long as its container', () => {
  let parent: string;
  let socketDir: string;
  let server: Server;
  let port: number;
  let sandbox: DockerSandbox;
  const scope = `egress-life-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    // Others may enter the parent: only the socket directory itself keeps them out.
    parent = mkdtempSync(join(tmpdir(), 'atb-egress-life-'));
    chmodSync(parent, 0o755);
    socketDir = join(parent, 'sockets');
    server = createServer((_request, response) => response.end('ok'));
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    sandbox = await DockerSandbox.create({
      docker,
      image: SANDBOX_IMAGE,
      warmPoolSize: 0,
      preimport: [],
      scope,
      healthCheckIntervalMs: 200,
      sweepIntervalMs: 1_000,
      egress: {
        allow: [{ host: 'local.test', ports: [port], privateAddresses: true }],
        resolve: async host => {
          if (host !== 'local.test') throw Object.assign(new Error('x'), { code: 'ENOTFOUND' });
          return ['127.0.0.1'];
        },
        socketDir,
      },
      conversations: {
        store: createStorage(),
        encryptionKey: 'egress-lifecycle-key-0123456789abcdef',
        warmPoolSize: 0,
      },
    });
  });

  afterAll(async () => {
    await sandbox?.close();
    await expectNoLeakedContainers();
    if (socketDir) expect(readdirSync(socketDir)).toEqual([]);
    server?.closeAllConnections();
    await new Promise(resolve => server?.close(resolve));
    rmSync(parent, { recursive: true, force: true });
  });

  /**
   * Runs a cell that fetches from the test's server through the proxy; its interpreter's id and
   * the host directory of its proxy's socket.
   */
  async function interpreterThatFetched(id: string): Promise<{ id: string; dir: string }> {
    const conversation = { id, userId: 'carol' };
    const cell = await sandbox.executeCell(
      `import urllib.request\nprint(urllib.request.urlopen("http://local.test:${port}/", timeout=20).read().decode())`,
      { conversation, timeoutMs: 60_000 },
    );
    expect(cell, cell.stderr).toMatchObject({ status: 'success', stdout: 'ok\n' });
    expect(cell.network?.hosts).toEqual([`local.test:${port}`]);
    const [found] = await docker.listContainers({
      all: true,
      filters: {
        label: [
          `ai-toolbelt.sandbox.instance=${sandbox.instanceId}`,
          'ai-toolbelt.sandbox.kind=conversation',
        ],
      },
    });
    const info = await docker.getContainer(found!.Id).inspect();
    const dir = info.Mounts.find(mount => mount.Destination === '/run/ai-toolbelt-egress')!.Source;
    expect(existsSync(join(dir, 'proxy.sock'))).toBe(true);
    return { id: found!.Id, dir };
  }

  it('closes the proxy of a stopped interpreter once the sweep removes it', async () => {
    const { id, dir } = await interpreterThatFetched('stopped');
    await docker.getContainer(id).kill();
    // The sandbox's own sweep (every second here) removes the stopped interpreter.
    await expect
      .poll(
        () =>
          docker
            .getContainer(id)
            .inspect()
            .then(
              () => 'there',
              () => 'gone',
            ),
        {
          timeout: 30_000,
          interval: 200,
        },
      )
      .toBe('gone');
    await expect.poll(() => existsSync(dir), { timeout: 5_000 }).toBe(false);
  }, 120_000);

  it('closes the proxy of an interpreter removed from outside (docker rm -f)', async () => {
    const { id, dir } = await interpreterThatFetched('removed');
    await docker.getContainer(id).remove({ force: true });
    await expect.poll(() => existsSync(dir), { timeout: 10_000 }).toBe(false);
  }, 120_000);
});
