import { LastKnownHealth, LastKnownOptions } from '../../../lib/health/last-known';
import type { CheckStatus } from '../../../lib/health/check';

const COMPONENTS = ['dynamodb', 'nats'] as const;

function health(refresh: LastKnownOptions['refresh'], clock: { t: number }, waitMs = 50) {
  return new LastKnownHealth({
    components: COMPONENTS,
    refresh,
    intervalMs: 10_000,
    waitMs,
    staleAfterMs: 12_000,
    now: () => clock.t,
  });
}

const allOk = async (): Promise<Record<string, CheckStatus>> => ({ dynamodb: 'ok', nats: 'ok' });

describe('LastKnownHealth (the public healthcheck)', () => {
  it('answers unknown before anything was measured, then what the refresh found, and how long ago', async () => {
    const clock = { t: 1_000_000 };
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const h = health(async () => {
      await gate;
      return { dynamodb: 'ok', nats: 'down' };
    }, clock);
    expect(await h.read()).toEqual({
      status: 'unknown',
      checks: { dynamodb: 'unknown', nats: 'unknown' },
      checked_s_ago: null,
    });
    release();
    await new Promise((r) => setImmediate(r));
    clock.t += 4_000;
    expect(await h.read()).toEqual({ status: 'degraded', checks: { dynamodb: 'ok', nats: 'down' }, checked_s_ago: 4 });
  });

  it('a storm of requests makes one refresh per interval, never one per request', async () => {
    const clock = { t: 0 };
    let probes = 0;
    const h = health(async () => {
      probes += 1;
      return allOk();
    }, clock);
    // 2,000 requests over 5 s of the clock, 20 at once each 50 ms.
    for (let i = 0; i < 100; i += 1) {
      await Promise.all(Array.from({ length: 20 }, () => h.read()));
      clock.t += 50;
    }
    expect(probes).toBe(1);
    clock.t += 10_000;
    await Promise.all(Array.from({ length: 50 }, () => h.read()));
    expect(probes).toBe(2);
    expect((await h.read()).status).toBe('ok');
  });

  it('a request never waits past its bound for a slow refresh', async () => {
    const clock = { t: 0 };
    const h = health(() => new Promise(() => undefined), clock, 30);
    const started = Date.now();
    expect((await h.read()).status).toBe('unknown');
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('a refresh that fails as a whole keeps the last known states', async () => {
    const clock = { t: 0 };
    let fail = false;
    const h = health(async () => {
      if (fail) throw new Error('TABLE_DOWNLOADS is not set');
      return allOk();
    }, clock);
    expect((await h.read()).status).toBe('ok');
    fail = true;
    clock.t += 10_000;
    expect(await h.read()).toEqual({ status: 'ok', checks: { dynamodb: 'ok', nats: 'ok' }, checked_s_ago: 10 });
  });

  it('drops a refresh that outlived its container being awake (frozen mid-probe), and starts anew', async () => {
    const clock = { t: 0 };
    const releases: Array<() => void> = [];
    const answers: Array<Record<string, CheckStatus>> = [
      { dynamodb: 'down', nats: 'down' }, // measured before the freeze: must not be reported as current
      { dynamodb: 'ok', nats: 'ok' },
    ];
    let calls = 0;
    const h = health(() => {
      const answer = answers[calls++];
      return new Promise((resolve) => releases.push(() => resolve(answer)));
    }, clock);
    await h.read();
    clock.t += 60_000; // the container slept a minute; the first probe resumes and ends only now
    releases[0]();
    await new Promise((r) => setImmediate(r));
    // What it measured a minute ago is not reported as current; a new refresh has started (still in flight).
    expect(await h.read()).toEqual({
      status: 'unknown',
      checks: { dynamodb: 'unknown', nats: 'unknown' },
      checked_s_ago: null,
    });
    expect(calls).toBe(2);
    releases[1]();
    await new Promise((r) => setImmediate(r));
    expect(await h.read()).toEqual({ status: 'ok', checks: { dynamodb: 'ok', nats: 'ok' }, checked_s_ago: 0 });
  });

  it('reports only its own components, whatever keys a refresh hands back', async () => {
    const clock = { t: 0 };
    const h = health(async () => ({ dynamodb: 'ok', __proto__: 'ok', extra: 'down' }) as never, clock);
    const view = await h.read();
    expect(Object.keys(view.checks)).toEqual(['dynamodb', 'nats']);
    expect(view).toMatchObject({ status: 'unknown', checks: { dynamodb: 'ok', nats: 'unknown' } });
  });
});
