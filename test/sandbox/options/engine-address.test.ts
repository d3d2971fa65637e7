import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidArgumentError } from '../../../src/errors/invalid-argument-error.ts';
import { SandboxInsecureEngineError } from '../../../src/errors/sandbox-insecure-engine-error.ts';
import {
  engineName,
  parseDockerHost,
  resolveEngineAddress,
} from '../../../src/sandbox/options/engine-address.ts';
import { resolveFleetOptions } from '../../../src/sandbox/options/fleet-options.ts';
import { DockerSandbox, SandboxUnavailableError } from '../../../src/sandbox/index.ts';
import { SANDBOX_IMAGE, describeSandbox, docker } from '../sandbox-availability.ts';

const certs = mkdtempSync(join(tmpdir(), 'ai-toolbelt-certs-'));
// Contents are never parsed as certificates here, but docker-modem splits ca.pem by its markers.
const pem = (label: string) => `-----BEGIN CERTIFICATE-----\n${label}\n-----END CERTIFICATE-----\n`;
for (const file of ['ca.pem', 'cert.pem', 'key.pem']) writeFileSync(join(certs, file), pem(file));

afterAll(() => rmSync(certs, { recursive: true, force: true }));
afterEach(() => vi.unstubAllEnvs());

describe('engine addresses, as the Docker CLI reads them', () => {
  it('parses unix, plain tcp, and tcp with TLS from DOCKER_TLS_VERIFY / DOCKER_CERT_PATH', () => {
    expect(parseDockerHost({ url: 'unix:///run/d.sock', env: {} })).toEqual({
      socketPath: '/run/d.sock',
    });
    expect(parseDockerHost({ url: 'tcp://10.0.0.5', env: {} })).toEqual({
      protocol: 'http',
      host: '10.0.0.5',
      port: '2375',
    });
    // Any non-empty DOCKER_TLS_VERIFY means verify, as with the CLI; the port defaults to 2376.
    const tls = parseDockerHost({
      url: '10.0.0.5',
      env: { DOCKER_TLS_VERIFY: 'yes', DOCKER_CERT_PATH: certs },
    });
    expect(tls).toMatchObject({ protocol: 'https', host: '10.0.0.5', port: '2376' });
    expect(String(tls.ca)).toContain('ca.pem');
    expect(String(tls.key)).toContain('key.pem');
    expect(parseDockerHost({ url: 'tcp://h:3000', certPath: certs, env: {} })).toMatchObject({
      protocol: 'https',
      port: '3000',
    });
  });

  it('refuses unverified TLS, unknown schemes and missing certificates, naming what is wrong', () => {
    const error = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e as InvalidArgumentError;
      }
      throw new Error('did not throw');
    };
    expect(
      error(() => parseDockerHost({ url: 'tcp://h', env: { DOCKER_TLS: '1' } })).message,
    ).toMatch(/DOCKER_TLS_VERIFY/);
    expect(error(() => parseDockerHost({ url: 'http://h:2375', env: {} })).argument).toBe('url');
    const missing = error(() =>
      parseDockerHost({
        url: 'tcp://h',
        env: { DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: '/nope' },
      }),
    );
    expect(InvalidArgumentError.isInstance(missing)).toBe(true);
    expect(missing.argument).toBe('DOCKER_CERT_PATH');
    expect(missing.message).toContain('/nope/ca.pem');
  });

  it('names engines by address only, never with credentials', () => {
    const ssh = resolveEngineAddress({
      engine: 'ssh://deploy:s3cret@sandbox.internal:2222',
      env: {},
    });
    expect(ssh.name).toBe('ssh://sandbox.internal:2222');
    expect(
      engineName(
        new Docker({
          host: '10.0.0.5',
          port: 2376,
          protocol: 'https',
          headers: { Authorization: 'Bearer t0ken' },
        }),
      ),
    ).toBe('tcp+tls://10.0.0.5:2376');
    expect(resolveEngineAddress({ engine: { socketPath: '/run/d.sock' } }).name).toBe(
      'unix:///run/d.sock',
    );
    expect(
      resolveEngineAddress({ engine: { url: 'tcp://[::1]:2376', certPath: certs } }).name,
    ).toBe('tcp+tls://[::1]:2376');
    expect(
      resolveEngineAddress({
        engine: { name: 'sandbox-a', url: 'tcp://h:1', certPath: certs },
      }).name,
    ).toBe('sandbox-a');
  });

  it('honours DOCKER_HOST for the default engine, and never lets it redirect an explicit one', () => {
    vi.stubEnv('DOCKER_HOST', 'tcp://10.9.9.9:2376');
    vi.stubEnv('DOCKER_TLS_VERIFY', '1');
    vi.stubEnv('DOCKER_CERT_PATH', certs);
    expect(resolveEngineAddress({}).name).toBe('tcp+tls://10.9.9.9:2376');
    const explicit = resolveEngineAddress({ engine: { socketPath: '/run/other.sock' } });
    expect(explicit.name).toBe('unix:///run/other.sock');
    const modem = (explicit.docker as unknown as { modem: Record<string, unknown> }).modem;
    expect(modem).toMatchObject({
      socketPath: '/run/other.sock',
      host: undefined,
      protocol: 'http',
    });
  });

  it('refuses plain tcp:// engines (no TLS), however given, with a typed error', () => {
    const refusal = (options: ConstructorParameters<typeof DockerSandbox>[0]) => {
      try {
        new DockerSandbox(options);
      } catch (error) {
        expect(SandboxInsecureEngineError.isInstance(error)).toBe(true);
        const { engine, argument, message } = error as SandboxInsecureEngineError;
        return { engine, argument, message };
      }
      throw new Error('did not throw');
    };
    const plain = refusal({ engines: ['unix:///a.sock', 'tcp://10.0.0.5'] });
    expect(plain).toMatchObject({ engine: 'tcp://10.0.0.5:2375', argument: 'engines[1]' });
    expect(plain.message).toContain('allowInsecureTcp: true');
    expect(plain.message).toContain('certPath');
    expect(refusal({ engines: [{ name: 'a', url: 'tcp://10.0.0.5:2375' }] }).argument).toBe(
      'engines[0]',
    );
    expect(refusal({ engines: [{ host: '10.0.0.5', port: 2375 }] }).engine).toBe(
      'tcp://10.0.0.5:2375',
    );
    expect(refusal({ docker: new Docker({ host: '10.0.0.5', protocol: 'http' }) }).argument).toBe(
      'docker',
    );
    vi.stubEnv('DOCKER_HOST', 'tcp://user:pw@10.9.9.9:2375');
    const fromEnv = refusal({});
    expect(fromEnv).toMatchObject({ engine: 'tcp://10.9.9.9:2375', argument: 'DOCKER_HOST' });
    expect(fromEnv.message).not.toContain('pw');
  });

  it('takes plain tcp:// only with allowInsecureTcp, and unix, ssh and TLS engines as before', () => {
    const names = (options: Parameters<typeof resolveFleetOptions>[0]) =>
      resolveFleetOptions(options).engines.map(engine => engine.name);
    expect(names({ engines: ['tcp://10.0.0.5'], allowInsecureTcp: true })).toEqual([
      'tcp://10.0.0.5:2375',
    ]);
    expect(
      names({
        engines: [
          'unix:///a.sock',
          'ssh://deploy@sandbox.internal',
          { url: 'tcp://10.0.0.6:2376', certPath: certs },
          { host: '10.0.0.7', port: 2376, protocol: 'https' },
        ],
      }),
    ).toEqual([
      'unix:///a.sock',
      'ssh://sandbox.internal:22',
      'tcp+tls://10.0.0.6:2376',
      'tcp+tls://10.0.0.7:2376',
    ]);
    vi.stubEnv('DOCKER_HOST', 'tcp://10.9.9.9:2376');
    vi.stubEnv('DOCKER_TLS_VERIFY', '1');
    vi.stubEnv('DOCKER_CERT_PATH', certs);
    expect(names({})).toEqual(['tcp+tls://10.9.9.9:2376']);
    expect(() => resolveFleetOptions({ allowInsecureTcp: 'yes' as unknown as boolean })).toThrow(
      /allowInsecureTcp/,
    );
  });

  it('rejects conflicting, empty and duplicate engine lists', () => {
    const argument = (options: ConstructorParameters<typeof DockerSandbox>[0]) => {
      try {
        new DockerSandbox(options);
      } catch (error) {
        expect(InvalidArgumentError.isInstance(error)).toBe(true);
        return (error as InvalidArgumentError).argument;
      }
      throw new Error('did not throw');
    };
    expect(argument({ docker: new Docker(), engines: ['unix:///a.sock'] })).toBe('engines');
    expect(argument({ engines: [] })).toBe('engines');
    expect(argument({ engines: ['unix:///a.sock', { socketPath: '/a.sock' }] })).toBe('engines[1]');
    expect(argument({ engines: [42 as unknown as string] })).toBe('engines[0]');
    expect(argument({ healthCheckIntervalMs: 0 })).toBe('healthCheckIntervalMs');
  });

  it('fails with no-engine, naming each engine and its typed error, when none answers', async () => {
    const error = await DockerSandbox.create({
      engines: ['unix:///nonexistent/a.sock', { name: 'b', url: 'tcp://127.0.0.1:1' }],
      allowInsecureTcp: true,
      preimport: [],
    }).catch((e: unknown) => e);
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'no-engine', engine: 'unix:///nonexistent/a.sock, b' });
    const causes = ((error as Error).cause as AggregateError).errors;
    expect(causes).toMatchObject([
      { reason: 'docker-unreachable', engine: 'unix:///nonexistent/a.sock' },
      { reason: 'docker-unreachable', engine: 'b' },
    ]);
    expect((error as Error).message).toContain('ECONNREFUSED');
  });
});

describeSandbox('an engine that is down at start', () => {
  it('is left out while the others run the code, and reported in the status', async () => {
    await using sandbox = await DockerSandbox.create({
      engines: [docker, 'unix:///nonexistent/docker.sock'],
      image: SANDBOX_IMAGE,
      warmPoolSize: 0,
      preimport: [],
    });
    expect(sandbox.engineStatus()).toMatchObject([
      { name: 'unix:///var/run/docker.sock', state: 'up' },
      {
        name: 'unix:///nonexistent/docker.sock',
        state: 'down',
        lastError: expect.stringContaining('ENOENT'),
      },
    ]);
    const results = await Promise.all([1, 2, 3].map(i => sandbox.execute(`print(${i})`)));
    expect(results.map(r => r.stdout)).toEqual(['1\n', '2\n', '3\n']);
    expect(sandbox.engineStatus()[0]!.runs).toBe(3);
  });
});
