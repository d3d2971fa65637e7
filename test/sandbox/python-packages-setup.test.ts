// `setup-sandbox --add-python`: pinned wheels from a package index, checked against the index's
// sha256, layered on the sandbox image as a new image whose tag names the list (issue 37, part 1).
// The index is the test's own: a folder of wheels it builds, served over HTTP on loopback.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DockerSandbox } from '../../src/sandbox/index.ts';
import { buildWheel, servePackageIndex, sha256Of } from '../helpers/package-index.ts';
import { SANDBOX_IMAGE, describeSandbox, docker } from './sandbox-availability.ts';

const script = fileURLToPath(new URL('../../scripts/setup-sandbox.sh', import.meta.url));

function setup(...args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', chunk => (output += chunk));
    child.stderr.on('data', chunk => (output += chunk));
    child.on('error', reject);
    child.on('exit', code => resolve({ code, output }));
  });
}

describeSandbox('setup-sandbox --add-python (a local package index)', () => {
  let dir: string;
  let server: Server;
  let index: string;
  const images: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'atb-index-'));
    // 1.0 is listed with its true hash; 2.0 with another file's (a tampered or corrupt mirror);
    // 3.0 with none.
    const good = buildWheel(dir, { module: 'atb_probe', version: '1.0', value: 42 });
    const bad = buildWheel(dir, { module: 'atb_probe', version: '2.0', value: 7 });
    const unhashed = buildWheel(dir, { module: 'atb_probe', version: '3.0', value: 9 });
    const sha = (file: string) => sha256Of(dir, file);
    const page =
      `<html><body><a href="../../files/${good}#sha256=${sha(good)}">${good}</a>` +
      `<a href="../../files/${bad}#sha256=${sha(good)}">${bad}</a>` +
      `<a href="../../files/${unhashed}">${unhashed}</a></body></html>`;
    let port: number;
    ({ server, port } = await servePackageIndex({
      dir,
      pages: { '/simple/atb-probe/': page },
      files: [good, bad, unhashed],
    }));
    index = `http://127.0.0.1:${port}/simple`;
  });

  afterAll(async () => {
    await new Promise(resolve => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
    for (const image of images)
      await docker
        .getImage(image)
        .remove({ force: true })
        .catch(() => {});
  });

  it('bakes a pinned wheel into a new image the sandbox names and imports', async () => {
    const run = await setup('--add-python', 'atb-probe==1.0', '--index-url', index);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toContain('atb_probe-1.0-py3-none-any.whl: sha256 matches the index');
    const image = /image (\S+) is ready \(on /.exec(run.output)?.[1];
    expect(image).toMatch(
      new RegExp(`^${SANDBOX_IMAGE.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-py[0-9a-f]{12}$`),
    );
    images.push(image!);
    await using sandbox = await DockerSandbox.create({
      image: image!,
      docker,
      warmPoolSize: 0,
      preimport: [],
    });
    expect(sandbox.packages).toContain('atb-probe==1.0');
    const result = await sandbox.execute('import atb_probe\nprint(atb_probe.VALUE)');
    expect(result).toMatchObject({ status: 'success', stdout: '42\n' });
    // The same list again is the same image, found, not rebuilt.
    const again = await setup('--add-python', 'atb-probe==1.0', '--index-url', index);
    expect(again.code, again.output).toBe(0);
    expect(again.output).toContain(`image ${image} is ready\n`);
  }, 180_000);

  it('refuses a wheel that does not match the index’s sha256 or has none, and unpinned requirements', async () => {
    const tampered = await setup('--add-python', 'atb-probe==2.0', '--index-url', index);
    expect(tampered.code).not.toBe(0);
    expect(tampered.output).toContain('DO NOT MATCH THE HASHES');
    const unchecked = await setup('--add-python', 'atb-probe==3.0', '--index-url', index);
    expect(unchecked.code).not.toBe(0);
    expect(unchecked.output).toContain(
      'atb_probe-3.0-py3-none-any.whl: the index gives no sha256 for it',
    );
    const loose = await setup('--add-python', 'atb-probe', '--index-url', index);
    expect(loose.code).not.toBe(0);
    expect(loose.output).toContain("takes pinned requirements NAME==VERSION, got 'atb-probe'");
    const names = (await docker.listImages()).flatMap(info => info.RepoTags ?? []);
    expect(names.filter(name => name.startsWith(`${SANDBOX_IMAGE}-py`))).toEqual(images);
  }, 180_000);
});
