/**
 * The emulator's rate limits, as T-Bank's limits.md states them: per token and service a number of
 * requests a "minute" (`LIMITS`), and per client IP address across every token 1,000 a "minute" and 50
 * a "second" (a sixtieth of the window). Counted in fixed windows of `windowMs` (60 s as in production;
 * a test may scale it down). Each check answers whether the request is over and the x-ratelimit-*
 * headers the gateway sends with it.
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
  /** Per client address: the most requests seen in one "minute" and one "second" window, and the 429s for it. */
  readonly addresses = new Map<string, { peakMinute: number; peakSecond: number; limited: number }>();
  private readonly windows = new Map<string, { start: number; used: number }>();

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
    const minuteUsed = this.count(`@${address}|minute`, this.windowMs, now).used;
    const secondUsed = this.count(`@${address}|second`, second, now).used;
    let seen = this.addresses.get(address);
    if (!seen) this.addresses.set(address, (seen = { peakMinute: 0, peakSecond: 0, limited: 0 }));
    seen.peakMinute = Math.max(seen.peakMinute, minuteUsed);
    seen.peakSecond = Math.max(seen.peakSecond, secondUsed);
    const over = minuteUsed > this.addressLimits.perMinute || secondUsed > this.addressLimits.perSecond;
    if (!over) return { over, headers: {} };
    seen.limited++;
    return { over, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1' } };
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
        'x-ratelimit-reset': String(Math.ceil((w.start + this.windowMs - now) / 1000)),
      },
    };
  }

  private count(key: string, windowMs: number, now: number): { start: number; used: number } {
    const start = now - (now % windowMs);
    let w = this.windows.get(key);
    if (!w || w.start !== start) this.windows.set(key, (w = { start, used: 0 }));
    w.used++;
    return w;
  }
}
