import { insideFault, latencyByPath, percentile, Recorder } from '../../../tools/soak/metrics';

describe('soak figures', () => {
  it('percentile: nearest rank', () => {
    expect(percentile([], 50)).toBeUndefined();
    expect(percentile([5], 99)).toBe(5);
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 99)).toBe(99);
  });

  it('a fault window lasts until the service recovered, or its end plus the grace', () => {
    const w = [{ kind: 'stop', target: 'nats-server', start: 100, end: 200, recoveredAt: 260 }];
    expect(insideFault(99, w)).toBe(false);
    expect(insideFault(100, w)).toBe(true);
    expect(insideFault(250, w)).toBe(true);
    expect(insideFault(261, w)).toBe(false);
    expect(insideFault(290, w, 100)).toBe(true);
  });

  it('splits each user path into inside and outside fault windows', () => {
    const r = new Recorder();
    r.sample('scan', 10, 100);
    r.sample('scan', 20, 300);
    r.sample('scan', 150, 9000);
    r.sample('page render', 10, 40);
    const l = latencyByPath(r.samples, [{ kind: 'kill', target: 's3rver', start: 100, end: 200 }]);
    expect(l.scan).toEqual({ outside: { n: 2, p50: 100, p99: 300 }, inside: { n: 1, p50: 9000, p99: 9000 } });
    expect(l['page render'].outside.n).toBe(1);
    expect(l['button answer']).toEqual({
      outside: { n: 0, p50: undefined, p99: undefined },
      inside: { n: 0, p50: undefined, p99: undefined },
    });
  });
});
