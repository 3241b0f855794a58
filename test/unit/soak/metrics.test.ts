import {
  backlogAfterFaults,
  insideFault,
  latencyByPath,
  metFault,
  percentile,
  Recorder,
} from '../../../tools/soak/metrics';

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
    r.sample('scan', 10, 50);
    r.sample('scan', 20, 70);
    r.sample('scan', 150, 9000);
    r.sample('page render', 10, 40);
    const l = latencyByPath(r.samples, [{ kind: 'kill', target: 's3rver', start: 100, end: 200 }]);
    expect(l.scan).toEqual({ outside: { n: 2, p50: 50, p99: 70 }, inside: { n: 1, p50: 9000, p99: 9000 } });
    expect(l['page render'].outside.n).toBe(1);
    expect(l['button answer']).toEqual({
      outside: { n: 0, p50: undefined, p99: undefined },
      inside: { n: 0, p50: undefined, p99: undefined },
    });
  });
});

describe('a request that met a fault', () => {
  const w = [{ kind: 'stop', target: 'smbd', start: 1000, end: 2000, recoveredAt: 2500 }];
  it('is the fault’s figure when its life touched the window: started before and waited it out, or inside', () => {
    expect(metFault({ at: 0, ms: 900 }, w)).toBe(false);
    expect(metFault({ at: 900, ms: 100 }, w)).toBe(true); // ended as the fault began
    expect(metFault({ at: 500, ms: 5000 }, w)).toBe(true); // spanned it
    expect(metFault({ at: 2500, ms: 10 }, w)).toBe(true); // sent at the recovery
    expect(metFault({ at: 2501, ms: 9000 }, w)).toBe(false); // after it: a slow drain shows outside
  });
  it('splits latencies by it: the one started before the fault is no longer outside', () => {
    const r = new Recorder();
    r.sample('scan', 0, 100);
    r.sample('scan', 900, 4000);
    r.sample('scan', 3000, 200);
    expect(latencyByPath(r.samples, w).scan).toEqual({
      outside: { n: 2, p50: 100, p99: 200 },
      inside: { n: 1, p50: 4000, p99: 4000 },
    });
  });
  it('the backlog: from the recovery to the end of the last request sent before it, per window', () => {
    const r = new Recorder();
    r.sample('scan', 1500, 1500); // done 500 ms after the recovery
    r.sample('scan', 2400, 3100); // done 3000 ms after it
    r.sample('scan', 2600, 9000); // sent after the recovery: not the fault's backlog
    r.sample('page render', 1200, 9000); // another path
    const never = { kind: 'kill', target: 'nats-server', start: 4000, end: 5000 };
    expect(backlogAfterFaults(r.samples, [...w, never], 'scan')).toEqual([3000, undefined]);
    expect(backlogAfterFaults([], w, 'scan')).toEqual([0]);
  });
});
