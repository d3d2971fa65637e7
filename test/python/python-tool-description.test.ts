import { describe, expect, it } from 'vitest';
import { pythonToolDescription } from '../../src/python/python-tool-description.ts';

describe('pythonToolDescription and the network', () => {
  const packages = ['numpy==1.24.2', 'pandas==1.5.3'];

  it('says there is no network and no pip without an egress policy', () => {
    const text = pythonToolDescription({ packages });
    expect(text).toContain('(no network,');
    expect(text).toContain('Nothing else can be installed (no pip, no network).');
    expect(text).not.toContain('%pip');
  });

  it('names the reachable hosts and %pip when pip has an index', () => {
    const text = pythonToolDescription({
      packages,
      stateful: true,
      network: { allow: ['devpi.internal:3141'], pip: true },
    });
    expect(text).not.toContain('no network');
    expect(text).not.toContain('Nothing else can be installed');
    expect(text).toContain(
      'Only these hosts can be reached, through the HTTP(S) proxy the environment names: devpi.internal:3141;',
    );
    expect(text).toContain('`%pip install NAME`');
    expect(text).toContain('it stays installed for later calls');
  });

  it('keeps "no pip" when the hosts allowed include no package index', () => {
    const text = pythonToolDescription({
      packages,
      network: { allow: ['api.example.com'], pip: false },
    });
    expect(text).toContain('Nothing else can be installed (no package index is reachable).');
    expect(text).toContain('api.example.com');
    expect(text).not.toContain('%pip');
  });

  it('leaves a custom base text as it is', () => {
    const text = pythonToolDescription({
      base: 'Run code.',
      network: { allow: ['a.example'], pip: false },
    });
    expect(text.startsWith('Run code. ')).toBe(true);
  });
});
