import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import * as root from '../src/index.ts';
import { ToolbeltError } from '../src/errors/toolbelt-error.ts';

const run = promisify(execFile);
const srcIndex = join(import.meta.dirname, '..', 'src', 'index.ts');
const sandboxIndex = join(import.meta.dirname, '..', 'src', 'sandbox', 'index.ts');

// Records every module an entry resolves (and what `then` does after), in a fresh process.
const probeOf = (entry: string, then = '') => `
import { registerHooks } from 'node:module';
const seen = [];
registerHooks({ resolve(specifier, context, next) { seen.push(specifier); return next(specifier, context); } });
const entry = await import(${JSON.stringify(entry)});
${then}
console.log(JSON.stringify(seen));
`;
const probe = probeOf(srcIndex);

describe('package entry', () => {
  it('never loads dockerode or child_process from the root entry', async () => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', probe]);
    const seen: string[] = JSON.parse(stdout);
    expect(seen.length).toBeGreaterThan(10); // the probe did see the graph
    expect(seen.filter(s => /dockerode|child_process|docker-modem/.test(s))).toEqual([]);
    // The embedding store is an unstorage Storage the app passes in: no driver (ioredis, fs) at load.
    expect(seen.filter(s => /unstorage|ioredis/.test(s))).toEqual([]);
  });

  it('loads the Kubernetes client from the sandbox subpath only for a Kubernetes engine', async () => {
    const loaded = async (then = '') => {
      const { stdout } = await run(process.execPath, [
        ...['--input-type=module', '-e', probeOf(sandboxIndex, then)],
      ]);
      return (JSON.parse(stdout) as string[]).filter(s => s.startsWith('@kubernetes/'));
    };
    expect(await loaded()).toEqual([]);
    // Checking a cluster (one that cannot be reached) loads it.
    const check =
      'await entry.DockerSandbox.create({ engines: [{ kubernetes: { kubeconfig: "/nonexistent" } }] }).catch(() => {});';
    expect(await loaded(check)).toContain('@kubernetes/client-node');
  });

  it('exports only error classes that follow the marker pattern', () => {
    // Every exported error needs a sample here, so a new one cannot skip the checks.
    const samples: Record<string, () => Error> = {
      ToolbeltError: () => new root.ToolbeltError({ name: 'X', message: 'x' }),
      InvalidArgumentError: () =>
        new root.InvalidArgumentError({ argument: 'a', value: 1, message: 'm' }),
      DimensionMismatchError: () =>
        new root.DimensionMismatchError({ expected: 2, actual: 3, context: 'c' }),
      DuplicateToolError: () => new root.DuplicateToolError({ toolName: 't' }),
      StoreError: () =>
        new root.StoreError({
          records: 'usage',
          operation: 'read',
          reason: 'timeout',
          message: 'm',
        }),
      CatalogFormatError: () => new root.CatalogFormatError({ file: 'f', line: 1, message: 'm' }),
      UsageError: () => new root.UsageError({ message: 'm' }),
      LocalModelError: () =>
        new root.LocalModelError({ reason: 'missing', message: 'm', path: '/p', command: 'c' }),
      McpConnectionError: () => new root.McpConnectionError({ server: 's', message: 'm' }),
      McpAuthorizationError: () =>
        new root.McpAuthorizationError({ server: 's', reason: 'needs-auth', message: 'm' }),
      McpBlockedAddressError: () =>
        new root.McpBlockedAddressError({
          server: 's',
          url: 'http://169.254.169.254',
          range: 'linkLocal',
          message: 'm',
        }),
      McpPaginationError: () =>
        new root.McpPaginationError({
          server: 's',
          reason: 'too-many-pages',
          pages: 3,
          cursor: 'c',
        }),
      McpTimeoutError: () =>
        new root.McpTimeoutError({ server: 's', operation: 'tools/call', timeoutMs: 5 }),
      CodeTooLargeError: () => new root.CodeTooLargeError({ bytes: 2, maxBytes: 1 }),
      DockerTimeoutError: () =>
        new root.DockerTimeoutError({ operation: 'container start', timeoutMs: 5 }),
      SandboxBusyError: () => new root.SandboxBusyError({ resource: 'runs', limit: 1 }),
      SandboxCleanupError: () =>
        new root.SandboxCleanupError({ containerIds: ['c'], causes: [new Error('x')] }),
      SandboxClosedError: () => new root.SandboxClosedError(),
      SandboxFileError: () =>
        new root.SandboxFileError({ operation: 'read', path: '/tmp/x', message: 'm' }),
      SandboxInsecureEngineError: () =>
        new root.SandboxInsecureEngineError({ engine: 'tcp://h:2375', argument: 'engines[0]' }),
      SandboxRuntimeMissingError: () =>
        new root.SandboxRuntimeMissingError({ runtime: 'runsc', available: ['runc'] }),
      SandboxUnavailableError: () =>
        new root.SandboxUnavailableError({ reason: 'image-missing', message: 'm' }),
      McpToolError: () =>
        new root.McpToolError({ server: 's', tool: 't', message: 'm', content: [] }),
    };
    const errorClasses = Object.entries(root).filter(
      ([, value]) => typeof value === 'function' && value.prototype instanceof Error,
    ) as [string, { isInstance(e: unknown): boolean }][];
    expect(errorClasses.map(([name]) => name).sort()).toEqual(Object.keys(samples).sort());
    for (const [name, ErrorClass] of errorClasses) {
      expect(Object.hasOwn(ErrorClass, 'isInstance'), `${name} declares its own isInstance`).toBe(
        true,
      );
      const sample = samples[name]!();
      expect(sample.name, name).not.toBe('Error');
      expect(ToolbeltError.isInstance(sample), name).toBe(true);
      expect(ErrorClass.isInstance(sample), name).toBe(true);
      expect(ErrorClass.isInstance(new Error('plain')), name).toBe(false);
      for (const [otherName, makeOther] of Object.entries(samples)) {
        if (otherName === name || name === 'ToolbeltError') continue;
        expect(ErrorClass.isInstance(makeOther()), `${name}.isInstance(${otherName})`).toBe(false);
      }
    }
  });
});
