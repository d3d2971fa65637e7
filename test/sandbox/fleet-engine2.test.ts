// Everything that uses engine 2 (a second dockerd with mutual TLS on 127.0.0.1:2376) lives in
// this one file, because some tests kill -9 and restart it: in one file they never race.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  DockerSandbox,
  DockerTimeoutError,
  SandboxCleanupError,
  SandboxUnavailableError,
  type SandboxResult,
} from '../../src/sandbox/index.ts';
import { listSandboxContainers } from '../../src/internal.ts';
import {
  ENGINE2,
  describeEngine2,
  engine2Local,
  engine2TlsOptions,
  killEngine2,
  startEngine2,
} from './fleet/engine2.ts';
import { recordingDocker } from './fleet/recording-docker.ts';
import { hostileCodeTests } from './hostile-code-suite.ts';
import { SANDBOX_IMAGE, docker } from './sandbox-availability.ts';

const tls = { url: ENGINE2.url, certPath: ENGINE2.certPath };

/** Containers of `sandbox` still on engine 2 (and, with `main`, on the main engine). */
async function leftovers(sandbox: DockerSandbox, { main = false } = {}): Promise<string[]> {
  const instanceId = sandbox.instanceId;
  const lists = await Promise.all([
    listSandboxContainers({ docker: engine2Local, instanceId }),
    main ? listSandboxContainers({ docker, instanceId }) : [],
  ]);
  return lists.flat().map(info => `${info.Id.slice(0, 12)} ${info.State}`);
}

function status(sandbox: DockerSandbox, name: string) {
  return sandbox.engineStatus().find(engine => engine.name === name)!;
}

describeEngine2('sandbox fleet: engine 2 over mutual TLS', () => {
  describe('a TLS engine runs the sandbox with every protection', () => {
    let sandbox: DockerSandbox;

    beforeAll(async () => {
      sandbox = await DockerSandbox.create({
        engines: [tls],
        image: SANDBOX_IMAGE,
        warmPoolSize: 1,
        preimport: [],
      });
    });

    afterAll(async () => {
      await sandbox?.close();
      expect(await leftovers(sandbox)).toEqual([]);
    });

    it('names the engine by its address and runs under gVisor', async () => {
      expect(sandbox.engineStatus()).toMatchObject([{ name: ENGINE2.tlsName, state: 'up' }]);
      expect(sandbox.runtime).toBe('runsc');
      expect(await sandbox.execute('print(6 * 7)')).toMatchObject({
        status: 'success',
        stdout: '42\n',
      });
    });

    hostileCodeTests({ sandbox: () => sandbox, docker: engine2Local });

    it('opens sessions on it', async () => {
      await using session = await sandbox.createSession();
      expect(await session.run({ command: 'echo $((6 * 7))' })).toMatchObject({
        exitCode: 0,
        stdout: '42\n',
      });
    });
  });

  describe('TLS refusals are typed errors naming the engine', () => {
    let dir: string;

    beforeAll(() => {
      // A CA of its own and a client certificate it signed: valid, but not for this engine.
      dir = mkdtempSync(join(tmpdir(), 'ai-toolbelt-other-ca-'));
      const openssl = (...args: string[]) =>
        execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
      const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
      openssl(
        'req',
        '-x509',
        ...ec,
        '-keyout',
        'ca-key.pem',
        '-out',
        'ca.pem',
        '-subj',
        '/CN=other',
        '-days',
        '1',
      );
      openssl(
        'req',
        '-new',
        ...ec,
        '-keyout',
        'key.pem',
        '-out',
        'client.csr',
        '-subj',
        '/CN=intruder',
      );
      writeFileSync(join(dir, 'ext.cnf'), 'extendedKeyUsage=clientAuth\n');
      openssl(
        'x509',
        '-req',
        '-in',
        'client.csr',
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca-key.pem',
        '-CAcreateserial',
        '-out',
        'cert.pem',
        '-extfile',
        'ext.cnf',
        '-days',
        '1',
      );
    });

    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    async function refusal(
      engine: ConstructorParameters<typeof DockerSandbox>[0],
    ): Promise<SandboxUnavailableError> {
      const error = await DockerSandbox.create({
        ...engine,
        image: SANDBOX_IMAGE,
        preimport: [],
      }).catch((e: unknown) => e);
      expect(SandboxUnavailableError.isInstance(error), String(error)).toBe(true);
      return error as SandboxUnavailableError;
    }

    it('refuses a client without a certificate', async () => {
      const { ca } = engine2TlsOptions();
      const error = await refusal({
        engines: [{ host: '127.0.0.1', port: 2376, protocol: 'https', ca }],
      });
      expect(error).toMatchObject({ reason: 'tls-refused', engine: ENGINE2.tlsName });
      expect(error.message).toContain('refused the TLS connection');
      expect(error.cause).toMatchObject({ code: expect.stringMatching(/^ERR_SSL_/) });
    });

    it('refuses a client certificate from another CA', async () => {
      const { ca } = engine2TlsOptions();
      const read = (file: string) => readFileSync(join(dir, file));
      const error = await refusal({
        engines: [
          {
            name: 'sandbox-a',
            host: '127.0.0.1',
            port: 2376,
            ca,
            cert: read('cert.pem'),
            key: read('key.pem'),
          },
        ],
      });
      expect(error).toMatchObject({ reason: 'tls-refused', engine: 'sandbox-a' });
    });

    it('refuses an engine whose certificate is not from the CA the client trusts', async () => {
      const error = await refusal({ engines: [{ url: ENGINE2.url, certPath: dir }] });
      expect(error).toMatchObject({ reason: 'tls-refused', engine: ENGINE2.tlsName });
    });

    it('says so when the client speaks plain HTTP to the TLS port', async () => {
      const error = await refusal({ engines: ['tcp://127.0.0.1:2376'], allowInsecureTcp: true });
      expect(error).toMatchObject({ reason: 'tls-refused', engine: 'tcp://127.0.0.1:2376' });
      expect(error.message).toContain('DOCKER_TLS_VERIFY');
    });

    it('honours DOCKER_HOST, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH as the Docker CLI does', async () => {
      vi.stubEnv('DOCKER_HOST', 'tcp://127.0.0.1:2376');
      vi.stubEnv('DOCKER_TLS_VERIFY', '1');
      vi.stubEnv('DOCKER_CERT_PATH', ENGINE2.certPath);
      let sandbox: DockerSandbox;
      try {
        sandbox = new DockerSandbox({ image: SANDBOX_IMAGE, warmPoolSize: 0, preimport: [] });
      } finally {
        vi.unstubAllEnvs();
      }
      await using _ = sandbox;
      expect(sandbox.engineStatus()[0]!.name).toBe(ENGINE2.tlsName);
      expect(await sandbox.execute('print("over tls")')).toMatchObject({ stdout: 'over tls\n' });
    });
  });

  describe('two engines, one killed mid-way', () => {
    it('settles every run once (success or a typed error within its timeout), fails over, and takes the engine back', async () => {
      const main = recordingDocker();
      const second = recordingDocker(engine2TlsOptions());
      const sandbox = await DockerSandbox.create({
        engines: [
          { docker: main.docker, name: 'main' },
          { docker: second.docker, name: 'engine2' },
        ],
        image: SANDBOX_IMAGE,
        warmPoolSize: 2,
        maxConcurrentExecutions: 4,
        healthCheckIntervalMs: 500,
        preimport: [],
      });
      try {
        const timeoutMs = 180_000;
        let killedAt = Number.POSITIVE_INFINITY;
        const runs = Array.from({ length: 50 }, async (_, i) => {
          const code = `import time\ntime.sleep(0.5)\nprint("run-${i}")`;
          const started = performance.now();
          const outcome = await sandbox.execute(code, { timeoutMs }).then(
            (result: SandboxResult) => ({ result }),
            (error: unknown) => ({ error }),
          );
          return {
            i,
            code,
            ...outcome,
            elapsedMs: performance.now() - started,
            settledAt: performance.now(),
          };
        });
        await vi.waitFor(
          () => {
            const engine2 = status(sandbox, 'engine2');
            if (engine2.runs < 3 || engine2.inFlight < 2) throw new Error('engine 2 not busy yet');
          },
          { timeout: 90_000, interval: 20 },
        );
        await killEngine2();
        killedAt = performance.now();
        const outcomes = await Promise.all(runs);

        const lost = outcomes.filter(outcome => 'error' in outcome);
        for (const outcome of outcomes) {
          expect(outcome.elapsedMs).toBeLessThan(timeoutMs);
          if ('result' in outcome) {
            expect(outcome.result).toMatchObject({
              status: 'success',
              stdout: `run-${outcome.i}\n`,
            });
          }
        }
        for (const { error } of lost as { error: unknown }[]) {
          const typed =
            SandboxUnavailableError.isInstance(error) || DockerTimeoutError.isInstance(error);
          expect(typed, String(error)).toBe(true);
          expect((error as SandboxUnavailableError).engine).toBe('engine2');
        }
        // Only runs whose code had reached engine 2's containers are lost; queued ones moved.
        expect(lost.length).toBeLessThanOrEqual(4);
        expect(
          outcomes.filter(o => 'result' in o && o.settledAt > killedAt).length,
        ).toBeGreaterThan(10);
        // Never twice: each run's code reached exactly one container.
        const sent = [...main.sent, ...second.sent];
        for (const { code, result } of outcomes as { code: string; result?: SandboxResult }[]) {
          const times = sent.filter(payload => payload === code).length;
          expect(times).toBeLessThanOrEqual(1);
          if (result !== undefined) expect(times).toBe(1);
        }
        expect(status(sandbox, 'engine2').state).toBe('down');

        await startEngine2();
        await vi.waitFor(() => expect(status(sandbox, 'engine2').state).toBe('up'), {
          timeout: 30_000,
          interval: 50,
        });
        const before = status(sandbox, 'engine2').runs;
        const after = await Promise.all(
          Array.from({ length: 8 }, (_, i) => sandbox.execute(`print(${i})`, { timeoutMs })),
        );
        expect(after.map(result => result.status)).toEqual(Array(8).fill('success'));
        expect(status(sandbox, 'engine2').runs).toBeGreaterThan(before);
      } finally {
        await sandbox.close();
      }
      // The re-admission sweep and close's sweep leave nothing of this sandbox on either engine,
      // and nothing labelled at all on engine 2 (only this file uses it).
      expect(await leftovers(sandbox, { main: true })).toEqual([]);
      expect(await listSandboxContainers({ docker: engine2Local })).toEqual([]);
    }, 400_000);
  });

  describe('one engine that dies and comes back', () => {
    it('fails sessions and runs with typed errors, recovers at the next run, and close() invents nothing', async () => {
      const sandbox = await DockerSandbox.create({
        engines: [tls],
        image: SANDBOX_IMAGE,
        warmPoolSize: 1,
        // Recovery must come from the quick probe of the next run, not from the background.
        healthCheckIntervalMs: 60_000,
        preimport: [],
      });
      try {
        const session = await sandbox.createSession();
        expect(await session.run({ command: 'echo up' })).toMatchObject({ stdout: 'up\n' });
        await killEngine2();

        const sessionError = await Promise.resolve(session.run({ command: 'echo again' })).catch(
          (e: unknown) => e,
        );
        expect(sessionError).toMatchObject({ reason: 'engine-lost', engine: ENGINE2.tlsName });
        expect(SandboxUnavailableError.isInstance(sessionError)).toBe(true);
        for (let i = 0; i < 3; i++) {
          const error = await sandbox
            .execute('print(1)', { timeoutMs: 10_000 })
            .catch((e: unknown) => e);
          expect(SandboxUnavailableError.isInstance(error), String(error)).toBe(true);
          expect(error).toMatchObject({ reason: 'docker-unreachable', engine: ENGINE2.tlsName });
          expect((error as Error).cause).toBeDefined();
        }

        await startEngine2();
        expect(await sandbox.execute('print("back")')).toMatchObject({
          status: 'success',
          stdout: 'back\n',
        });
        await expect(session.readTextFile({ path: 'x' })).rejects.toMatchObject({
          reason: 'engine-lost',
        });
      } finally {
        // Runs that never reached the engine (connection refused) are not reported.
        await sandbox.close();
      }
      expect(await leftovers(sandbox)).toEqual([]);
    }, 120_000);

    it('a conversation outlives its engine: after a restart the next cell gets its state back', async () => {
      const sandbox = await DockerSandbox.create({
        engines: [tls],
        image: SANDBOX_IMAGE,
        warmPoolSize: 0,
        preimport: [],
      });
      try {
        const conversation = { id: 'engine2-chat', userId: 'erin' };
        await sandbox.executeCell('import math\nvalue = math.prod([6, 7])', { conversation });
        await killEngine2();
        await startEngine2();
        const next = await sandbox.executeCell('print(value)', { conversation });
        expect(next).toMatchObject({ status: 'success', stdout: '42\n', cell: 2 });
        expect(next.restored).toMatchObject({ method: 'replay', cells: 1, failed: [] });
        expect(next.restored?.summary).toMatch(
          /^Python state restored by re-running 1 earlier cell/,
        );
      } finally {
        await sandbox.close();
      }
      expect(await leftovers(sandbox)).toEqual([]);
    }, 120_000);

    it('close() while the engine is down reports exactly the containers that exist there', async () => {
      const sandbox = await DockerSandbox.create({
        engines: [tls],
        image: SANDBOX_IMAGE,
        warmPoolSize: 2,
        preimport: [],
      });
      let warm: string[] = [];
      try {
        await vi.waitFor(() => expect(sandbox.warmCount).toBe(2), {
          timeout: 30_000,
          interval: 50,
        });
        warm = (
          await listSandboxContainers({ docker: engine2Local, instanceId: sandbox.instanceId })
        ).map(c => c.Id);
        await killEngine2();
        await sandbox.execute('print(1)').catch(() => {});
        const error = await sandbox.close().catch((e: unknown) => e);
        expect(SandboxCleanupError.isInstance(error), String(error)).toBe(true);
        expect([...(error as SandboxCleanupError).containerIds].sort()).toEqual([...warm].sort());
        expect((error as SandboxCleanupError).causes[0]).toMatchObject({ engine: ENGINE2.tlsName });
      } finally {
        await startEngine2();
      }
      // They were really there; the sweep of an expired or owned container would remove them,
      // here the test does.
      const there = await listSandboxContainers({
        docker: engine2Local,
        instanceId: sandbox.instanceId,
      });
      expect(there.map(c => c.Id).sort()).toEqual([...warm].sort());
      for (const id of warm) await engine2Local.getContainer(id).remove({ force: true });
    }, 120_000);
  });
});
