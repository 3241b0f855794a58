import { cachedProbe, healthReport, runProbes } from '../../../lib/health/check';

describe('runProbes', () => {
  it('reports a hanging or failing probe as down within the bound, the others ok', async () => {
    const began = Date.now();
    const checks = await runProbes(
      {
        fine: async () => undefined,
        hangs: () => new Promise(() => undefined),
        throws: async () => {
          throw new Error('refused');
        },
      },
      100,
    );
    expect(checks).toEqual({ fine: 'ok', hangs: 'down', throws: 'down' });
    expect(Date.now() - began).toBeLessThan(1000);
  });

  it('is degraded when any check is down', () => {
    expect(healthReport({ a: 'ok', b: 'down' }, '1.0.0', 61_500)).toEqual({
      status: 'degraded',
      version: '1.0.0',
      uptime_s: 61,
      checks: { a: 'ok', b: 'down' },
    });
    expect(healthReport({ a: 'ok' }, '1.0.0', 0).status).toBe('ok');
  });
});

describe('cachedProbe', () => {
  it('asks the probe at most once per ttl, failures included', async () => {
    let calls = 0;
    let t = 0;
    const probe = cachedProbe(
      async () => {
        calls++;
        throw new Error('down');
      },
      5000,
      () => t,
    );
    const signal = new AbortController().signal;
    await expect(probe(signal)).rejects.toThrow('down');
    t = 4999;
    await expect(probe(signal)).rejects.toThrow('down');
    expect(calls).toBe(1);
    t = 5000;
    await expect(probe(signal)).rejects.toThrow('down');
    expect(calls).toBe(2);
  });
});
