import type Docker from 'dockerode';
import { expect, it } from 'vitest';
import type { DockerSandbox } from '../../src/sandbox/index.ts';

/**
 * The hostile-code tests, for any engine: memory bomb, fork bomb, output flood, network,
 * read-only root, noexec /tmp, full /tmp, setuid, and the kill at the timeout. `docker` is a
 * client of the same engine, used to check that a timed-out container is dead and removed.
 */
export function hostileCodeTests({
  sandbox,
  docker,
}: {
  /** The sandbox under test (read when the tests run). */
  sandbox: () => DockerSandbox;
  /** A client of the engine the sandbox runs on. */
  docker: Docker;
}): void {
  it('stops a memory bomb at the memory limit (oom)', async () => {
    const result = await sandbox().execute('b = []\nwhile True:\n    b.append(bytearray(10**7))', {
      timeoutMs: 20_000,
    });
    expect(result.status).toBe('oom');
    expect(result.exitCode).toBe(137);
  });

  it('contains a fork bomb (gVisor ends the sandbox) and keeps working afterwards', async () => {
    const result = await sandbox().execute('import os\nwhile True:\n    os.fork()', {
      timeoutMs: 20_000,
    });
    expect(['crashed', 'error']).toContain(result.status);
    expect(result.status).not.toBe('success');
    const after = await sandbox().execute('print("still fine")');
    expect(after).toMatchObject({ status: 'success', stdout: 'still fine\n' });
  });

  it('cuts a 100 MB print at the cap, killing the run, with host memory bounded', async () => {
    const maxOutputBytes = 1024 * 1024;
    const rssBefore = process.memoryUsage().rss;
    const result = await sandbox().execute(
      'import sys\nsys.stdout.write("x" * (100 * 1024 * 1024))\nprint("never seen")',
      { timeoutMs: 30_000 },
    );
    // Cut by the cap, not by the (much later) timeout.
    expect(result.status).toBe('output-limit');
    expect(result.exitCode).toBeNull();
    expect(result.truncated).toBe(true);
    expect(result.stdout.length).toBe(maxOutputBytes);
    expect(result.stdout).not.toContain('never seen');
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
  });

  it('has no network', async () => {
    const result = await sandbox().execute(
      'import socket\ns = socket.socket()\ns.settimeout(3)\ns.connect(("1.1.1.1", 80))',
    );
    expect(result.status).toBe('error');
    expect(result.stderr).toMatch(/OSError|unreachable|No route/);
  });

  it('cannot write outside /tmp (read-only root)', async () => {
    const result = await sandbox().execute('open("/usr/evil", "w").write("x")');
    expect(result.status).toBe('error');
    expect(result.stderr).toMatch(/PermissionError|Read-only file system/);
  });

  it('cannot execute files written to /tmp (noexec)', async () => {
    const result = await sandbox().execute(
      'import os, shutil, subprocess\nshutil.copy("/bin/true", "/tmp/t")\nos.chmod("/tmp/t", 0o755)\n' +
        'subprocess.run(["/tmp/t"], check=True)',
    );
    expect(result.status).toBe('error');
    expect(result.stderr).toContain("PermissionError: [Errno 13] Permission denied: '/tmp/t'");
  });

  it('gets ENOSPC when /tmp is full', async () => {
    const result = await sandbox().execute(
      'f = open("/tmp/big", "wb")\nfor _ in range(64):\n    f.write(b"x" * 1024 * 1024)\nf.flush()',
    );
    expect(result.status).toBe('error');
    expect(result.stderr).toContain('No space left on device');
  });

  it('cannot become root (setuid fails)', async () => {
    const result = await sandbox().execute('import os\nos.setuid(0)');
    expect(result.status).toBe('error');
    expect(result.stderr).toContain('PermissionError: [Errno 1] Operation not permitted');
  });

  it('kills `while True: pass` at the timeout, and the container is dead and then removed', async () => {
    // Docker names the container's host after its ID, which lets the test find it afterwards.
    const result = await sandbox().execute(
      'import socket\nprint(socket.gethostname(), flush=True)\nwhile True:\n    pass',
      { timeoutMs: 1_500 },
    );
    expect(result).toMatchObject({ status: 'timeout', exitCode: null, truncated: false });
    expect(result.durationMs).toBeGreaterThanOrEqual(1_500);
    const containerId = result.stdout.trim();
    expect(containerId).toMatch(/^[0-9a-f]{12}$/);
    const running = await docker
      .getContainer(containerId)
      .inspect()
      .then(
        info => info.State.Running,
        (error: { statusCode?: number }) =>
          error.statusCode === 404 ? false : Promise.reject(error),
      );
    expect(running).toBe(false);
    await sandbox().waitForCleanup();
    await expect(docker.getContainer(containerId).inspect()).rejects.toMatchObject({
      statusCode: 404,
    });
  });
}
