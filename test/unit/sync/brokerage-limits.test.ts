import { RateLimiter } from '../../../emulator/brokerage/limits';

/**
 * The T-Bank emulator's limiter counts SLIDING windows (limits.md: 1,000 a minute and 50 a second per
 * address, across tokens; per token and service its own minute): two fixed windows' worth sent around
 * a boundary is refused, and a refusal's reset says when the oldest request counted leaves.
 */
const MINUTE = 60_000;

function limiter() {
  let now = 10 * MINUTE;
  const l = new RateLimiter(MINUTE, () => now, { perMinute: 1000, perSecond: 50 });
  return { l, at: (ms: number) => (now = ms), now: () => now };
}

describe('the emulator rate limiter (sliding windows)', () => {
  it('refuses the second half of two windows’ worth sent around a minute boundary, across tokens', () => {
    const { l, at } = limiter();
    const edge = 11 * MINUTE;
    // 1,000 requests in the last 20 s before the boundary, from many "tokens" (the address counts them all).
    for (let i = 0; i < 1000; i++) {
      at(edge - 20_000 + i * 20);
      expect(l.byAddress('10.0.0.1').over).toBe(false);
    }
    at(edge + 100); // a fixed window would have reset here
    const refused = l.byAddress('10.0.0.1');
    expect(refused.over).toBe(true);
    // The oldest counted request (edge - 20 s) leaves the window at edge + 40 s: 39.9 s from now.
    expect(refused.headers).toEqual({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '40' });
    expect(l.byAddress('10.0.0.2').over).toBe(false); // another address has its own budget
    expect(l.addresses.get('10.0.0.1')).toMatchObject({ limited: 1, peakMinute: 1001 });
  });

  it('refuses the 51st request of any sliding second, wherever the second starts', () => {
    const { l, at } = limiter();
    const t = 20 * MINUTE + 990; // straddles a fixed second boundary
    for (let i = 0; i < 50; i++) {
      at(t + i * 0.4);
      expect(l.byAddress('a').over).toBe(false);
    }
    at(t + 25);
    expect(l.byAddress('a')).toMatchObject({ over: true, headers: { 'x-ratelimit-reset': '1' } });
    at(t + 1001); // every earlier one has left the second
    expect(l.byAddress('a').over).toBe(false);
  });

  it("a token's per-service limit slides too, its reset the wait for its oldest request", () => {
    const { l, at } = limiter();
    const edge = 30 * MINUTE;
    for (let i = 0; i < 100; i++) {
      at(edge - 1000 + i);
      expect(l.byToken('tok', 'UsersService').over).toBe(false);
    }
    at(edge + 500);
    expect(l.byToken('tok', 'UsersService')).toMatchObject({
      over: true,
      headers: { 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '59' },
    });
    expect(l.byToken('other', 'UsersService').over).toBe(false);
    at(edge + MINUTE); // the burst has left the window
    expect(l.byToken('tok', 'UsersService').over).toBe(false);
  });
});
