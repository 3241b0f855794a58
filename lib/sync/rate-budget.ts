import { setTimeout as sleep } from 'node:timers/promises';
import type { SyncDataStore } from './data-store';
import type { CallBudget } from './tbank/client';
import type { TBankService } from './tbank/contract';
import { TBankError } from './tbank/errors';

/**
 * The call budgets, shared by every step in any invocation: counters per fixed
 * window in the table (conditional ADD), never process memory. Two budgets
 * gate every call: the token's per-service budget, then the egress addresses'
 * budget shared by ALL tokens (T-Bank limits each IP address: under 50
 * requests/s, no overrun below 1,000/min). A spent window waits for the next
 * one (pacing); only a wait longer than the step's remaining time fails the call.
 */

/** Documented per-token limits per minute (unary). */
export const TBANK_LIMITS: Record<TBankService, number> = {
  UsersService: 100,
  OperationsService: 200,
  InstrumentsService: 200,
};

/** T-Bank's documented limits per IP address, across every token (limits.md). */
export const ADDRESS_LIMITS = { perSecond: 50, perMinute: 1000 } as const;

/** The partition of the egress budget's counters: ours, never a user id (those are ULIDs). */
export const EGRESS_BUDGET = 'EGRESS';

/**
 * The calls all our egress addresses may send, per minute and per second, kept
 * below the documented limits (5 % and 10 % headroom: a call counted at a
 * window's end may land in the next, and the addresses' shares are uneven).
 */
export type AddressLimits = { perSecond: number; perMinute: number };

export function egressLimits(addresses: number, limits: AddressLimits = ADDRESS_LIMITS): AddressLimits {
  return {
    perMinute: Math.max(1, Math.floor(addresses * limits.perMinute * 0.95)),
    perSecond: Math.max(1, Math.floor(addresses * limits.perSecond * 0.9)),
  };
}

/**
 * How many connections the tick may start syncing per minute so that their
 * calls fit the egress budget: the per-minute budget over the calls one
 * hourly sync costs (`callsPerSync`, measured: `npm run bench -- sync`).
 */
export function admissionsPerMinute(addresses: number, callsPerSync: number): number {
  return Math.max(1, Math.floor(egressLimits(addresses).perMinute / Math.max(1, callsPerSync)));
}

export class SharedCallBudget implements CallBudget {
  /** Time spent waiting for a window, by budget: the step reports it (TbankBudgetWait). */
  readonly waitedMs = { token: 0, egress: 0 };

  constructor(
    private readonly deps: {
      data: Pick<SyncDataStore, 'takeRateSlot'>;
      user: string;
      /** The limits' window: 60 s in production, scaled down in tests like the emulator's. */
      windowMs: number;
      /** Below the limit by this share: a call taken at a window's end may land in the next one. */
      headroom?: number;
      clock?: () => number;
      /** Our egress addresses (TBANK_EGRESS_ADDRESSES): the shared per-address budget; absent, none is kept. */
      egressAddresses?: number;
      /** The limits per address (limits.md's by default; a test scales them with its window). */
      addressLimits?: AddressLimits;
    },
  ) {}

  async acquire(service: TBankService, signal: AbortSignal, remainingMs: () => number): Promise<void> {
    const { windowMs, egressAddresses } = this.deps;
    const limit = Math.max(1, Math.floor(TBANK_LIMITS[service] * (1 - (this.deps.headroom ?? 0.05))));
    await this.take(this.deps.user, service, limit, windowMs, signal, remainingMs, "the token's budget", 'token');
    if (!egressAddresses) return;
    // The addresses' budget: the second, then the minute last, right before the call is sent. No
    // minute slot is taken in the window's last 3 %: a call sent then could land in the next window.
    const egress = egressLimits(egressAddresses, this.deps.addressLimits);
    const what = 'the egress addresses’ budget';
    const second = Math.max(1, Math.round(windowMs / 60));
    await this.take(EGRESS_BUDGET, 'second', egress.perSecond, second, signal, remainingMs, what, 'egress');
    await this.take(
      EGRESS_BUDGET,
      'minute',
      egress.perMinute,
      windowMs,
      signal,
      remainingMs,
      what,
      'egress',
      windowMs * 0.03,
    );
  }

  /** One slot of one budget, waiting for the next window while this one is spent. */
  private async take(
    owner: string,
    counter: string,
    limit: number,
    windowMs: number,
    signal: AbortSignal,
    remainingMs: () => number,
    what: string,
    budget: keyof SharedCallBudget['waitedMs'],
    guardMs = 0,
  ): Promise<void> {
    const clock = this.deps.clock ?? (() => performance.timeOrigin + performance.now());
    for (;;) {
      const now = clock();
      const start = now - (now % windowMs);
      const guarded = start + windowMs - now < guardMs;
      if (!guarded && (await this.deps.data.takeRateSlot(owner, counter, start, limit, start + 2 * windowMs + 60_000)))
        return;
      const wait = start + windowMs - now + 10;
      if (wait >= remainingMs())
        throw new TBankError('rate-limited', `${counter}: ${what} of ${limit} calls is spent until the window resets`);
      const began = performance.now();
      try {
        await sleep(wait, undefined, { signal }).catch(() => {
          throw signal.reason;
        });
      } finally {
        this.waitedMs[budget] += performance.now() - began;
      }
    }
  }
}
