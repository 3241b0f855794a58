/**
 * The emulator's rate limits, as T-Bank's limits.md states them (RussianInvestments/investAPI,
 * src/docs/limits.md): per token and service a number of unary requests a "minute" (`LIMITS`), and per
 * client IP address across every token and account 1,000 a "minute" and 50 a "second" (a sixtieth of
 * the window). Counted in SLIDING windows (every request of the last `windowMs` before it, wherever the
 * window starts; 60 s as in production, a test may scale it down): a client that sends two fixed
 * windows' worth around a boundary is refused, as a per-address ban would be the real answer. Each check
 * answers whether the request is over and the x-ratelimit-* headers the gateway sends with it
 * (reset: the seconds until the oldest request counted leaves the window).
 */

export const LIMITS: Record<string, number> = { UsersService: 100, OperationsService: 200, InstrumentsService: 200 };

export interface AddressLimits {
  perMinute: number;
  perSecond: number;
}

export interface Verdict {
  over: boolean;
  /** x-ratelimit-* headers (bare names) to send with the answer. */
  headers: Record<string, string>;
}

export class RateLimiter {
  /** Per client address: the most requests seen in one sliding "minute" and "second", and the 429s for it. */
  readonly addresses = new Map<string, { peakMinute: number; peakSecond: number; limited: number }>();
  /** The instants of the requests still inside each key's window, oldest first (`head`: the first still in). */
  private readonly windows = new Map<string, { times: number[]; head: number }>();

  constructor(
    readonly windowMs: number,
    private readonly clock: () => number,
    private readonly addressLimits: AddressLimits | false,
  ) {}

  reset(): void {
    this.windows.clear();
    this.addresses.clear();
  }

  /** Counts one request of `address` in its "minute" and "second" windows, whatever its token. */
  byAddress(address: string): Verdict {
    if (!this.addressLimits) return { over: false, headers: {} };
    const now = this.clock();
    const second = Math.max(1, Math.round(this.windowMs / 60));
    const minute = this.count(`@${address}|minute`, this.windowMs, now);
    const perSecond = this.count(`@${address}|second`, second, now);
    const [minuteUsed, secondUsed] = [minute.used, perSecond.used];
    let seen = this.addresses.get(address);
    if (!seen) this.addresses.set(address, (seen = { peakMinute: 0, peakSecond: 0, limited: 0 }));
    seen.peakMinute = Math.max(seen.peakMinute, minuteUsed);
    seen.peakSecond = Math.max(seen.peakSecond, secondUsed);
    const over = minuteUsed > this.addressLimits.perMinute || secondUsed > this.addressLimits.perSecond;
    if (!over) return { over, headers: {} };
    seen.limited++;
    const reset = Math.max(
      minuteUsed > this.addressLimits.perMinute ? minute.resetMs : 0,
      secondUsed > this.addressLimits.perSecond ? perSecond.resetMs : 0,
    );
    return { over, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(seconds(reset)) } };
  }

  /** Counts one request of `token` on `service`; answers that fail are counted too (the real limiter counts requests). */
  byToken(token: string, service: string): Verdict {
    const limit = LIMITS[service] ?? 100;
    const now = this.clock();
    const w = this.count(`${token}|${service}`, this.windowMs, now);
    return {
      over: w.used > limit,
      headers: {
        'x-ratelimit-limit': String(limit),
        'x-ratelimit-remaining': String(Math.max(0, limit - w.used)),
        'x-ratelimit-reset': String(seconds(w.resetMs)),
      },
    };
  }

  /** Counts one request at `now` in the sliding window of `key`: the requests within `windowMs` before it, itself included. */
  private count(key: string, windowMs: number, now: number): { used: number; resetMs: number } {
    let w = this.windows.get(key);
    if (!w) this.windows.set(key, (w = { times: [], head: 0 }));
    while (w.head < w.times.length && w.times[w.head] <= now - windowMs) w.head++;
    if (w.head > 1024) {
      // Amortised compaction: requests out of the window are dropped in bulk.
      w.times = w.times.slice(w.head);
      w.head = 0;
    }
    w.times.push(now);
    return { used: w.times.length - w.head, resetMs: w.times[w.head] + windowMs - now };
  }
}

/** x-ratelimit-reset: whole seconds, at least 1. */
const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
