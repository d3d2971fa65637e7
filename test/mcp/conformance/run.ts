// Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance,
// client mode) against driver.ts, offline, and fails on any unexpected result
// (baseline.yml lists the expected failures, each with its reason).
//
// 1. the current spec version's auth scenarios as the suite runs them (in parallel);
// 2. its other scenarios one at a time: sse-retry measures reconnect timing to
//    ±200 ms, which a 2-core machine starting 18 drivers at once cannot hold;
// 3. the back-compat, draft and extension scenarios (informative, same baseline).
//
//   npm run test:conformance
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const here = import.meta.dirname;
const specVersion = '2025-11-25';
const cli = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json')),
  'dist/index.js',
);
const driver = `${process.execPath} ${join(here, 'driver.ts')}`;
const baseline = join(here, 'baseline.yml');
const output = await mkdtemp(join(tmpdir(), 'mcp-conformance-'));
// Both the runner and each driver it starts refuse connections off this machine.
const env = {
  ...process.env,
  NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${join(here, 'loopback-only.ts')}`,
};

type Run = { label: string; code: number; summary: string };

function conformance(label: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    for (const stream of [child.stdout, child.stderr]) {
      stream.on('data', (chunk: Buffer) => {
        text += chunk;
        process.stdout.write(chunk);
      });
    }
    child.on('error', reject);
    child.on('close', code => {
      const clean = text.replace(/\x1b\[[0-9;]*m/g, '');
      const summary =
        /^Total: .*$/m.exec(clean)?.[0] ?? /^Passed: .*$/m.exec(clean)?.[0] ?? '(no summary)';
      resolve({ label, code: code ?? 1, summary });
    });
  });
}

const common = ['--command', driver, '--expected-failures', baseline, '--timeout', '90000'];
const runs: Run[] = [];
try {
  const listing = await new Promise<string>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [cli, 'list', '--client', '--spec-version', specVersion],
      {
        env,
      },
    );
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => (text += chunk));
    child.on('error', reject);
    child.on('close', () => resolve(text));
  });
  const current = [...listing.matchAll(/^\s+- (\S+)/gm)].map(match => match[1]!);
  if (current.length === 0) throw new Error(`no client scenarios listed for ${specVersion}`);

  runs.push(
    await conformance(`auth suite, spec ${specVersion}`, [
      'client',
      '--suite',
      'auth',
      '--spec-version',
      specVersion,
      ...common,
      '-o',
      join(output, 'auth'),
    ]),
  );
  for (const scenario of current.filter(name => !name.startsWith('auth/'))) {
    runs.push(
      await conformance(scenario, [
        'client',
        '--scenario',
        scenario,
        ...common,
        '-o',
        join(output, 'core'),
      ]),
    );
  }
  for (const suite of ['backcompat', 'draft', 'extensions']) {
    runs.push(
      await conformance(`${suite} suite`, [
        'client',
        '--suite',
        suite,
        ...common,
        '-o',
        join(output, suite),
      ]),
    );
  }
} finally {
  await rm(output, { recursive: true, force: true });
}

console.log('\n=== ai-toolbelt MCP conformance ===');
for (const run of runs)
  console.log(`${run.code === 0 ? 'ok  ' : 'FAIL'} ${run.label}: ${run.summary}`);
const failed = runs.filter(run => run.code !== 0);
console.log(
  failed.length === 0
    ? 'All scenarios pass, or fail as listed in test/mcp/conformance/baseline.yml.'
    : `${failed.length} run(s) had unexpected results: ${failed.map(run => run.label).join(', ')}`,
);
process.exitCode = failed.length === 0 ? 0 : 1;
