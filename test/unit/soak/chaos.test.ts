import { seededRandom } from '../../../tools/soak/args';
import { FaultAction, runChaos } from '../../../tools/soak/chaos';

/** The chaos schedule on a fake clock: one fault at a time, each window recorded with its recovery. */
function harness(opts: { healthyAfterMs?: number; failEnd?: boolean } = {}) {
  let now = 0;
  const log: string[] = [];
  let healthyFrom = 0;
  const action = (kind: string, target: string): FaultAction => ({
    kind,
    target,
    begin: async () => void log.push(`begin ${kind} ${target} @${now}`),
    end: async () => {
      log.push(`end ${kind} ${target} @${now}`);
      healthyFrom = now + (opts.healthyAfterMs ?? 0);
      if (opts.failEnd) throw new Error('SIGCONT failed');
    },
  });
  return {
    log,
    deps: {
      actions: [action('stop', 'nats-server'), action('kill', 's3rver'), action('telegram-429', 'telegram-emulator')],
      random: seededRandom(3),
      now: () => now,
      sleep: async (ms: number) => void (now += ms),
      healthy: async () => now >= healthyFrom,
      say: () => undefined,
    },
  };
}

describe('chaos schedule', () => {
  const timing = {
    faultMs: [10_000, 30_000] as [number, number],
    gapMs: [20_000, 40_000] as [number, number],
    recoveryTimeoutMs: 60_000,
  };

  it('one fault at a time, every kind before any repeats, none past the end', async () => {
    const h = harness();
    const windows = await runChaos(h.deps, { until: 600_000 }, timing);
    expect(windows.length).toBeGreaterThanOrEqual(6);
    expect(new Set(windows.slice(0, 3).map((w) => w.kind)).size).toBe(3);
    for (let i = 0; i < windows.length; i++) {
      expect(windows[i].end - windows[i].start).toBeGreaterThanOrEqual(10_000);
      expect(windows[i].end - windows[i].start).toBeLessThanOrEqual(30_000);
      expect(windows[i].end).toBeLessThanOrEqual(600_000);
      if (i > 0) expect(windows[i].start).toBeGreaterThanOrEqual(windows[i - 1].recoveredAt!);
    }
    // Each begin is followed by its own end before the next begin.
    const kinds = h.log.map((l) => l.split(' ')[0]);
    expect(kinds.join(',')).toBe(Array.from({ length: windows.length }, () => 'begin,end').join(','));
  });

  it('records how long the service took to answer again, or that it never did', async () => {
    const slow = harness({ healthyAfterMs: 7_000 });
    const [w] = await runChaos(slow.deps, { until: 100_000 }, timing);
    expect(w.recoveredAt! - w.end).toBeGreaterThanOrEqual(7_000);
    expect(w.recoveredAt! - w.end).toBeLessThan(8_000);
    const never = harness({ healthyAfterMs: 10 * 60_000 });
    const [n] = await runChaos(never.deps, { until: 100_000 }, timing);
    expect(n.recoveredAt).toBeUndefined();
  });

  it('a fault whose end fails is still closed and recorded', async () => {
    const h = harness({ failEnd: true });
    const windows = await runChaos(h.deps, { until: 100_000 }, timing);
    expect(windows[0].end).toBeGreaterThan(windows[0].start);
  });
});
