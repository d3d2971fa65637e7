// The address policy and the fetch of sign-in on their own: which addresses
// are refused, the check at connect time, and redirects hop by hop.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressPolicy } from '../../src/mcp/auth/address-policy.ts';
import { signInFetch } from '../../src/mcp/auth/sign-in-fetch.ts';
import { McpBlockedAddressError } from '../../src/mcp/index.ts';
import {
  type Canary,
  type HostileServer,
  startCanary,
  startHostileServer,
} from '../fixtures/mcp/hostile-oauth-server.ts';

let canary: Canary;
let server: HostileServer;
beforeAll(async () => {
  [canary, server] = await Promise.all([startCanary(), startHostileServer()]);
});
afterAll(async () => {
  await Promise.all([canary?.close(), server?.close()]);
});

describe('AddressPolicy', () => {
  it('classifies addresses: private, CGNAT, ULA, link-local, unspecified and mapped forms are refused', async () => {
    const policy = new AddressPolicy({ server: 'evil', allowed: ['192.168.7.0/24', 'fd00::5'] });
    const refused = {
      'http://10.1.2.3/': 'private',
      'http://172.16.0.1/': 'private',
      'http://192.168.1.1/': 'private',
      'http://100.64.0.1/': 'carrierGradeNat',
      'http://0.0.0.0/': 'unspecified',
      'http://[::]/': 'unspecified',
      'http://[::1]/': 'loopback',
      'http://[fe80::1]/': 'linkLocal',
      'http://[fd12:3456::1]/': 'uniqueLocal',
      'http://[::ffff:169.254.169.254]/': 'linkLocal',
      // IPv4-compatible (::/96): the URL spells them in hex (::a00:1), which ipaddr.js calls unicast.
      'http://[::10.0.0.1]/': 'private',
      'http://[::a9fe:a9fe]/': 'linkLocal',
      'http://[::127.0.0.2]/': 'loopback',
      'http://[::0.0.0.2]/': 'unspecified',
      'http://[64:ff9b::a9fe:a9fe]/': 'rfc6052',
      'http://2130706433/': 'loopback', // 127.0.0.1 spelt as a number
    };
    for (const [url, range] of Object.entries(refused)) {
      await expect(policy.check(new URL(url)), url).rejects.toMatchObject({ range });
    }
    for (const url of [
      'https://93.184.216.34/',
      'https://[2606:4700::1111]/',
      'http://192.168.7.20/',
      'http://[fd00::5]/',
      'http://[::192.168.7.9]/', // allowed as 192.168.7.9 is
      'https://[::8.8.8.8]/',
    ]) {
      await expect(policy.check(new URL(url)), url).resolves.toBeUndefined();
    }
  });

  it('resolves host names and checks every address', async () => {
    const policy = new AddressPolicy({ server: 'evil' });
    await expect(policy.check(new URL(`http://localhost:${canary.port}/`))).rejects.toMatchObject({
      range: 'loopback',
    });
  });

  it('checks again when the socket connects, so a second DNS answer cannot differ (rebinding)', async () => {
    const policy = new AddressPolicy({ server: 'evil' });
    const lookup = policy.lookup(new URL('http://rebind.example/'));
    const error = await new Promise(resolve => lookup('localhost', {}, resolve));
    expect(McpBlockedAddressError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ range: 'loopback' });
  });
});

describe('signInFetch', () => {
  it('checks every redirect hop: its own origin may redirect within itself, never to a blocked address', async () => {
    const fetch = signInFetch({
      server: 'evil',
      serverUrl: server.url,
      policy: new AddressPolicy({ server: 'evil' }),
    });
    const landed = await fetch(`${server.origin}/hop?to=${encodeURIComponent('/landing')}`);
    expect(await landed.text()).toBe('landed');
    const away = fetch(`${server.origin}/hop?to=${encodeURIComponent(`${canary.origin}/x`)}`);
    await expect(away).rejects.toMatchObject({ range: 'loopback', url: canary.origin });
    const scheme = fetch(`${server.origin}/hop?to=${encodeURIComponent('file:///etc/passwd')}`);
    await expect(scheme).rejects.toMatchObject({ range: 'scheme' });
    expect(canary.hits).toEqual([]);
  });
});
