// A refusal keeps only a host and a port, however malformed the request was: never its path,
// query string or credentials (issue 45, item 5). Host-side, on loopback.
import { afterAll, expect, it } from 'vitest';
import { networkNotes } from '../../../src/sandbox/egress/network-usage.ts';
import type { EgressRefusal } from '../../../src/sandbox/types.ts';
import { proxyHarness, rawExchange } from './proxy-harness.ts';

const harness = proxyHarness();
afterAll(() => harness.close());

const SECRET = 's3cr3t';

it('records only the host and port of malformed CONNECT, absolute-form and unreadable requests', async () => {
  const refusals: EgressRefusal[] = [];
  const { proxy, path } = await harness.start(
    { allow: [{ host: 'index.test', ports: [3141], privateAddresses: true }] },
    refusals,
  );
  const heads = [
    `CONNECT index.test:3141/simple/private-pkg/?token=${SECRET} HTTP/1.1\r\nHost: x\r\n\r\n`,
    `CONNECT index.test?token=${SECRET}:443 HTTP/1.1\r\nHost: x\r\n\r\n`,
    `CONNECT user:${SECRET}@index.test:443 HTTP/1.1\r\nHost: x\r\n\r\n`,
    `CONNECT index.test:3141?token=${SECRET} HTTP/1.1\r\nHost: x\r\n\r\n`,
    `GET https://index.test:3141/simple/private-pkg/?token=${SECRET} HTTP/1.1\r\nHost: x\r\n\r\n`,
    `GET ftp://user:${SECRET}@index.test/x HTTP/1.1\r\nHost: x\r\n\r\n`,
    `GET /simple/?token=${SECRET} HTTP/1.1\r\nHost: index.test\r\n\r\n`,
    // Node's own parser rejects these (clientError).
    `CONNECT index.test:3141#${SECRET} HTTP/1.1\r\nHost: x\r\n\r\n`,
    `NOT-HTTP ${SECRET}\r\n\r\n`,
  ];
  for (const [i, head] of heads.entries()) {
    const answer = await rawExchange(path, head);
    expect(answer, head).toMatch(i < 7 ? /^HTTP\/1\.1 403 / : /^$/);
  }
  const usage = proxy.takeUsage();
  expect(usage.refusedCount).toBe(heads.length);
  expect(usage.refused.map(r => `${r.host} ${r.port} ${r.reason}`)).toEqual([
    'index.test 3141 bad-request',
    'index.test 0 bad-request',
    'index.test 443 bad-request',
    'index.test 3141 bad-request',
    'index.test 3141 bad-request',
    'index.test 0 bad-request',
    '(no host) 0 bad-request',
    '(unreadable request) 0 bad-request',
    '(unreadable request) 0 bad-request',
  ]);
  // Not in the run's record, its notes, or what telemetry is told (onRefused).
  for (const kept of [JSON.stringify(usage), networkNotes(usage).join('\n')]) {
    expect(kept).not.toMatch(new RegExp(`${SECRET}|token|private-pkg|simple|user|[?#@%]`));
  }
  expect(refusals).toEqual(usage.refused);
});

it('does not keep a malformed host even when a limit refuses it first', async () => {
  const { proxy, path } = await harness.start({
    allow: [{ host: 'index.test', ports: [443], privateAddresses: true }],
    maxConnectionsPerRun: 1,
  });
  await rawExchange(path, 'CONNECT nowhere.test:443 HTTP/1.1\r\nHost: x\r\n\r\n');
  await rawExchange(path, `CONNECT index.test?token=${SECRET}:443 HTTP/1.1\r\nHost: x\r\n\r\n`);
  const usage = proxy.takeUsage();
  expect(usage.refused.map(r => r.host)).toEqual(['nowhere.test', 'index.test']);
  expect(JSON.stringify(usage)).not.toContain(SECRET);
});
