import Docker from 'dockerode';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/invalid-argument-error.ts';
import type { PythonSandbox } from '../../src/python/index.ts';
import {
  CodeTooLargeError,
  DockerSandbox,
  SandboxClosedError,
  SandboxRuntimeMissingError,
  SandboxUnavailableError,
  type Sandbox,
} from '../../src/sandbox/index.ts';
import {
  SANDBOX_IMAGE,
  describeSandbox,
  docker,
  expectNoLeakedContainers,
} from './sandbox-availability.ts';

// Argument checks happen before Docker is touched: these run on any machine.
describe('DockerSandbox input validation', () => {
  const unreachable = new Docker({ socketPath: '/nonexistent/docker.sock' });

  it("satisfies the python tool's sandbox contract", () => {
    // A compile-time check as much as a runtime one: tsc fails if the shapes drift apart.
    const forPythonTool: PythonSandbox = new DockerSandbox({ docker: unreachable });
    const asSandbox: Sandbox = new DockerSandbox({ docker: unreachable });
    expect(typeof forPythonTool.execute).toBe('function');
    expect(typeof asSandbox[Symbol.asyncDispose]).toBe('function');
  });

  it('rejects code that is not a string', async () => {
    const sandbox = new DockerSandbox({ docker: unreachable });
    const error = await sandbox.execute(42 as unknown as string).catch(e => e);
    expect(InvalidArgumentError.isInstance(error)).toBe(true);
    expect(error.argument).toBe('code');
  });

  it('rejects code over maxCodeBytes, counting UTF-8 bytes', async () => {
    const sandbox = new DockerSandbox({ docker: unreachable, maxCodeBytes: 10 });
    const error = await sandbox.execute('print("ééééé")').catch(e => e);
    expect(CodeTooLargeError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ bytes: 19, maxBytes: 10 });
  });

  it.each([0, -5, Number.NaN, Infinity, '100'])('rejects timeoutMs %s', async timeoutMs => {
    const sandbox = new DockerSandbox({ docker: unreachable });
    const error = await sandbox
      .execute('print(1)', { timeoutMs: timeoutMs as number })
      .catch(e => e);
    expect(InvalidArgumentError.isInstance(error)).toBe(true);
    expect(error.argument).toBe('timeoutMs');
  });

  it('rejects out-of-range options at construction', () => {
    expect(() => new DockerSandbox({ pidsLimit: 32, preimport: [] })).toThrow(/pidsLimit/);
    expect(() => new DockerSandbox({ warmPoolSize: -1, preimport: [] })).toThrow(/warmPoolSize/);
    expect(() => new DockerSandbox({ maxQueued: -1, preimport: [] })).toThrow(/maxQueued/);
    expect(() => new DockerSandbox({ maxSessions: Number.NaN, preimport: [] })).toThrow(
      /maxSessions/,
    );
  });

  it('rejects out-of-range session caps before touching Docker', async () => {
    const sandbox = new DockerSandbox({ docker: unreachable });
    const error = await sandbox.createSession({ maxFileBytes: 0 }).catch(e => e);
    expect(InvalidArgumentError.isInstance(error)).toBe(true);
    expect(error.argument).toBe('maxFileBytes');
  });

  it('rejects runs after close()', async () => {
    const sandbox = new DockerSandbox({ docker: unreachable });
    await sandbox.close();
    await expect(sandbox.execute('print(1)')).rejects.toSatisfy(SandboxClosedError.isInstance);
  });

  it('says how to start Docker when the engine is unreachable', async () => {
    const error = await DockerSandbox.create({ docker: unreachable }).catch(e => e);
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect(error.reason).toBe('docker-unreachable');
    expect(error.message).toContain('npx ai-toolbelt setup-sandbox');
  });
});

describeSandbox('DockerSandbox engine checks', () => {
  afterAll(async () => {
    await expectNoLeakedContainers();
  });

  it('refuses a missing runtime with install instructions, never falling back to runc', async () => {
    const error = await DockerSandbox.create({
      docker,
      runtime: 'no-such-runtime',
      preimport: [],
    }).catch(e => e);
    expect(SandboxRuntimeMissingError.isInstance(error)).toBe(true);
    expect(error.available).toContain('runsc');
    expect(error.message).toContain('apt-get install runsc');
    expect(error.message).toContain('unsafeAllowRuncRuntime');
  });

  it('refuses runc unless the unsafe opt-in is set', async () => {
    const error = await DockerSandbox.create({ docker, runtime: 'runc', preimport: [] }).catch(
      e => e,
    );
    expect(SandboxRuntimeMissingError.isInstance(error)).toBe(true);
  });

  it('says how to build the image when it is missing', async () => {
    const error = await DockerSandbox.create({
      docker,
      image: 'ai-toolbelt/absent:0',
      preimport: [],
    }).catch(e => e);
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect(error.reason).toBe('image-missing');
    expect(error.message).toContain('npx ai-toolbelt setup-sandbox');
  });

  it('uses gVisor when present even with the runc opt-in', async () => {
    await using sandbox = await DockerSandbox.create({
      docker,
      image: SANDBOX_IMAGE,
      warmPoolSize: 0,
      unsafeAllowRuncRuntime: true,
      preimport: [],
    });
    expect(sandbox.runtime).toBe('runsc');
  });
});

it('expects the image scripts/setup-sandbox.sh builds by default', async () => {
  const { readFileSync } = await import('node:fs');
  const { DEFAULT_SANDBOX_IMAGE } = await import('../../src/sandbox/index.ts');
  const script = readFileSync(new URL('../../scripts/setup-sandbox.sh', import.meta.url), 'utf8');
  expect(script).toContain(`IMAGE="\${AI_TOOLBELT_SANDBOX_IMAGE:-${DEFAULT_SANDBOX_IMAGE}}"`);
});
