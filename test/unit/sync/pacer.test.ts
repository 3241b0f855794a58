import { TimeoutError } from '../../../lib/util/errors';
import { silentLogger } from '../../../lib/log';
import { EGRESS_PACE, paceFor, sendsPerWindow } from '../../../lib/sync/pacer';
import { egressLimits, SharedCallBudget, TBANK_LIMITS } from '../../../lib/sync/rate-budget';
import { TBankClient } from '../../../lib/sync/tbank/client';
import { PastBoundError } from '../../../lib/sync/tbank/errors';
import { MemorySyncDataStore } from '../../support/memory-sync-data-store';
import { VirtualClock } from '../../support/virtual-clock';

/**
 * The pacer under a simulated clock: many takers (steps of different users, and several steps
 * of one user) share one egress schedule; some answers are 429 with x-ratelimit-reset, and their
 * retries go through the budget like first calls. Every send is recorded at its (simulated)
 * instant; no sliding second or minute may hold more than the budget, wherever it starts.
 */

const T0 = Date.UTC(2026, 11, 6, 12, 0, 0);
const MINUTE = 60_000;

/** The most sends any window [t, t + w] (closed) holds. */
function peak(times: number[], w: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i] - sorted[j] > w) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

function world(opts: { every429?: number; resetSeconds?: number; tokenLimitOf?: string } = {}) {
  const clock = new VirtualClock(T0 + 37); // off any window boundary
  const data = new MemorySyncDataStore();
  const sends: { at: number; user: string; service: string; status: number }[] = [];
  let n = 0;
  jest.spyOn(global, 'fetch').mockImplementation(async (input, init) => {
    const url = String(input);
    const service = /v1\.(\w+)\//.exec(url)![1];
    const user = String((init!.headers as Record<string, string>).authorization).slice('Bearer t.'.length);
    // `tokenLimitOf`: that user's every 429 is its token's own limit (the token's counter spent); else the address's.
    const mine = opts.tokenLimitOf === undefined || opts.tokenLimitOf === user;
    const limited = mine && opts.every429 !== undefined && ++n % opts.every429 === 0;
    sends.push({ at: clock.now, user, service, status: limited ? 429 : 200 });
    const counter: Record<string, string> = opts.tokenLimitOf
      ? { 'x-ratelimit-limit': '200', 'x-ratelimit-remaining': '0' }
      : {};
    return limited
      ? new Response(JSON.stringify({ code: 8, message: '80002' }), {
          status: 429,
          headers: { 'x-ratelimit-reset': String(opts.resetSeconds ?? 1), ...counter },
        })
      : new Response('{}', { status: 200 });
  });
  const client = (user: string) =>
    new TBankClient({
      baseUrl: 'http://tbank.test',
      token: `t.${user}`,
      appName: 'pacer-test',
      signal: new AbortController().signal,
      remainingMs: () => 10 * MINUTE,
      log: silentLogger,
      rateLimitWaits: 1000,
      budget: new SharedCallBudget({
        data,
        user,
        windowMs: MINUTE,
        clock: () => clock.now,
        sleep: clock.sleep,
        egressAddresses: 1,
      }),
    });
  /** `calls` sequential calls of one step. */
  const step = async (user: string, calls: number, service: 'OperationsService' | 'InstrumentsService') => {
    const api = client(user);
    for (let i = 0; i < calls; i++) await api.call(service, 'Get', {}, (b) => b);
  };
  return { clock, data, sends, step };
}

afterEach(() => jest.restoreAllMocks());

describe('the pacer (simulated clock)', () => {
  it('paceFor keeps the GCRA bound at the limit, with and without a burst', () => {
    expect(sendsPerWindow(paceFor(950, MINUTE), MINUTE)).toBe(950);
    expect(sendsPerWindow(paceFor(190, MINUTE, 0.25), MINUTE)).toBeLessThanOrEqual(190);
    expect(sendsPerWindow(paceFor(45, 1000), 1000)).toBe(45);
  });

  it.each([
    ['none', undefined],
    ['every 9th', 9],
  ])(
    '60 steps of 25 calls at once, 429s: %s (retried): no sliding second or minute over the budget',
    async (_, every429) => {
      const w = world({ every429, resetSeconds: 1 });
      const steps = Array.from({ length: 60 }, (_, i) =>
        w.step(`u${i % 20}`, 25, i % 2 ? 'OperationsService' : 'InstrumentsService'),
      );
      await w.clock.run(Promise.all(steps));
      const budget = egressLimits(1);
      const times = w.sends.map((s) => s.at);
      if (every429) expect(w.sends.length).toBeGreaterThan(60 * 25); // the retries were sent too
      expect(peak(times, MINUTE)).toBeLessThanOrEqual(budget.perMinute);
      expect(peak(times, 1000)).toBeLessThanOrEqual(budget.perSecond);
      // Without 429s the schedule kept the address busy right up to the budget (~16 calls a second).
      if (!every429) expect(peak(times, MINUTE)).toBeGreaterThan(0.98 * budget.perMinute);
      // A 429 held every taker, not only its caller, for its reset (1 s).
      for (const limited of w.sends.filter((s) => s.status === 429))
        expect(w.sends.filter((s) => s.at > limited.at && s.at < limited.at + 1000)).toEqual([]);
    },
  );

  it("a token's own 429 holds that token alone: the other connections' calls go on (decision 362)", async () => {
    const w = world({ every429: 3, resetSeconds: 2, tokenLimitOf: 'storming' });
    const steps = [w.step('storming', 12, 'OperationsService'), w.step('calm', 40, 'OperationsService')];
    await w.clock.run(Promise.all(steps));
    const limited = w.sends.filter((s) => s.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(4);
    for (const l of limited) {
      const within = w.sends.filter((s) => s.at > l.at && s.at < l.at + 2000);
      // The storming token waited out its reset; the calm one was not held by it.
      expect(within.filter((s) => s.user === 'storming')).toEqual([]);
    }
    const calmDuringResets = limited.flatMap((l) =>
      w.sends.filter((s) => s.user === 'calm' && s.at > l.at && s.at < l.at + 2000),
    );
    expect(calmDuringResets.length).toBeGreaterThan(0);
    // The addresses' schedule was never paused.
    expect(await w.data.pacePausedUntil(EGRESS_PACE)).toBe(0);
  });

  it("one token's concurrent steps stay under its per-service limit in every sliding minute", async () => {
    const w = world();
    await w.clock.run(Promise.all(Array.from({ length: 4 }, () => w.step('solo', 120, 'OperationsService'))));
    const times = w.sends.map((s) => s.at);
    expect(times).toHaveLength(480);
    expect(peak(times, MINUTE)).toBeLessThanOrEqual(Math.floor(TBANK_LIMITS.OperationsService * 0.95));
    // Nothing left the egress schedule behind: its state is in the shared store, not in a budget object.
    expect(w.data.pace.schedules.get(EGRESS_PACE)?.tat).toBeGreaterThan(T0);
  });

  it('a send instant past the step’s bound is not taken: the call fails RATE_LIMITED at once, the schedule untouched', async () => {
    const w = world();
    const budget = (user: string) =>
      new SharedCallBudget({
        data: w.data,
        user,
        windowMs: MINUTE,
        clock: () => w.clock.now,
        sleep: w.clock.sleep,
        egressAddresses: 1,
      });
    const signal = new AbortController().signal;
    // 2,000 ms of remaining time: about 16 sends of backlog at most.
    const all = Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => budget(`v${i}`).acquire('UsersService', signal, () => 2000)),
    );
    await w.clock.run(all);
    const taken = await all;
    const refused = taken.filter((t) => t.status === 'rejected');
    expect(refused.length).toBeGreaterThan(20);
    expect(String((refused[0] as PromiseRejectedResult).reason)).toMatch(/past the step's bound/);
  });

  it('a step with no time left for a call is out of its own time (STEP_TIMEOUT), not rate limited; nothing taken', async () => {
    const w = world();
    const budget = new SharedCallBudget({
      data: w.data,
      user: 'u',
      windowMs: MINUTE,
      clock: () => w.clock.now,
      sleep: w.clock.sleep,
      egressAddresses: 1,
    });
    const signal = new AbortController().signal;
    await expect(budget.acquire('UsersService', signal, () => 500)).rejects.toBeInstanceOf(TimeoutError);
    // The schedule is untouched: the next caller with time gets the first instant at once.
    await budget.acquire('UsersService', signal, () => 10_000);
    expect(budget.waitedMs).toEqual({ token: 0, egress: 0 });
  });

  it("a 429 whose pause runs past the bound: the refusal keeps the 429's tracking id (the step row shows it)", async () => {
    jest.spyOn(global, 'fetch').mockImplementation(
      async () =>
        new Response(JSON.stringify({ code: 8, message: '80002' }), {
          status: 429,
          headers: { 'x-ratelimit-reset': '30', 'x-tracking-id': 'ab'.repeat(16) },
        }),
    );
    let refusals = 0;
    const client = new TBankClient({
      baseUrl: 'http://tbank.test',
      token: 't.user-x',
      appName: 'pacer-test',
      signal: new AbortController().signal,
      remainingMs: () => 60_000,
      log: silentLogger,
      // A budget whose second instant falls past the bound: the retry after the 429 is refused.
      budget: {
        acquire: async () => {
          if (refusals++ > 0) throw new PastBoundError('no send instant before the bound');
        },
        pause: async () => {},
      },
    });
    const err = (await client.call('UsersService', 'GetAccounts', {}, (b) => b).catch((e) => e)) as PastBoundError;
    expect(err).toBeInstanceOf(PastBoundError);
    expect(err.trackingId).toBe('ab'.repeat(16));
    expect(err.message).toMatch(/no send instant before the bound, after /);
  });
});
