// Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance,
// client mode) against driver.ts, offline, and fails on any unexpected result
// (baseline.yml lists the expected failures, each with its reason).
//
// Every client scenario of the current spec version, then the back-compat,
// draft and extension ones, each through the suite's own CLI
// (`conformance client --scenario NAME --expected-failures baseline.yml`), one
// at a time: `--suite` starts all drivers at once, and on a 2-core machine that
// breaks sse-retry's ±200 ms reconnect timing and, under other load, connects.
// The totals are printed in the suite's summary format.
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
// Both the suite and each driver it starts refuse connections off this machine.
const env = {
  ...process.env,
  NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${join(here, 'loopback-only.ts')}`,
};

type Outcome = { scenario: string; code: number; passed: number; failed: number; warnings: number };

function conformance(args: string[], echo: boolean): Promise<{ code: number; text: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { env });
    let text = '';
    for (const stream of [child.stdout, child.stderr]) {
      stream.on('data', (chunk: Buffer) => {
        text += chunk;
        if (echo) process.stdout.write(chunk);
      });
    }
    child.on('error', reject);
    child.on('close', code =>
      resolve({ code: code ?? 1, text: text.replace(/\x1b\[[0-9;]*m/g, '') }),
    );
  });
}

async function scenarios(filter: string[]): Promise<string[]> {
  const { text } = await conformance(['list', '--client', ...filter], false);
  return [...text.matchAll(/^\s+- (\S+)/gm)].map(match => match[1]!);
}

const current = await scenarios(['--spec-version', specVersion]);
if (current.length === 0) throw new Error(`no client scenarios listed for ${specVersion}`);
const others = (await scenarios([])).filter(name => !current.includes(name));

const output = await mkdtemp(join(tmpdir(), 'mcp-conformance-'));
const outcomes: Outcome[] = [];
try {
  for (const scenario of [...current, ...others]) {
    console.log(`\n=== ${scenario} ===`);
    const { code, text } = await conformance(
      [
        'client',
        '--scenario',
        scenario,
        '--command',
        driver,
        '--expected-failures',
        baseline,
        '--timeout',
        '90000',
        '-o',
        output,
      ],
      true,
    );
    const [, passed, total, failed, warnings] =
      /Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(text) ?? [];
    outcomes.push({
      scenario,
      code,
      passed: Number(passed ?? 0),
      failed: Number(failed ?? total ?? 1),
      warnings: Number(warnings ?? 0),
    });
  }
} finally {
  await rm(output, { recursive: true, force: true });
}

const summary = (list: Outcome[]) => {
  const sum = (key: 'passed' | 'failed' | 'warnings') => list.reduce((n, o) => n + o[key], 0);
  return `Total: ${sum('passed')} passed, ${sum('failed')} failed, ${sum('warnings')} warnings`;
};
console.log('\n=== SUITE SUMMARY ===\n');
for (const o of outcomes) {
  const mark = o.failed === 0 && o.warnings === 0 ? '✓' : '✗';
  const extra = o.warnings > 0 ? `, ${o.warnings} warnings` : '';
  const expected = o.code === 0 && o.failed > 0 ? ' (expected: baseline.yml)' : '';
  console.log(`${mark} ${o.scenario}: ${o.passed} passed, ${o.failed} failed${extra}${expected}`);
}
const inCurrent = outcomes.filter(o => current.includes(o.scenario));
console.log(`\nSpec ${specVersion} (${inCurrent.length} scenarios): ${summary(inCurrent)}`);
console.log(
  `Back-compat, draft and extensions (${outcomes.length - inCurrent.length}): ${summary(outcomes.filter(o => !current.includes(o.scenario)))}`,
);
const unexpected = outcomes.filter(o => o.code !== 0);
console.log(
  unexpected.length === 0
    ? 'Every scenario passes, or fails as listed in test/mcp/conformance/baseline.yml.'
    : `Unexpected results (or stale baseline entries): ${unexpected.map(o => o.scenario).join(', ')}`,
);
process.exitCode = unexpected.length === 0 ? 0 : 1;
