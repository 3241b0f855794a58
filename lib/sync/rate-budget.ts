import { setTimeout as sleep } from 'node:timers/promises';
import { AdmitPolicy, FIRST_SYNC_SHARE } from './admission';
import type { SyncDataStore } from './data-store';
import { EGRESS_PACE, Pace, PaceStore, paceFor, stricter, tokenPace } from './pacer';
import type { CallBudget } from './tbank/client';
import type { TBankService } from './tbank/contract';
import { PastBoundError, RateScope } from './tbank/errors';
import { TimeoutError } from '../util/errors';

/**
 * The call budgets, shared by every step in any invocation: pacing schedules
 * in the table (pacer.ts: one atomic write per call), never process memory.
 * Two schedules gate every call, retries included: the token's per-service
 * one, then the egress addresses' one shared by ALL tokens (T-Bank limits each
 * IP address: under 50 requests/s, no overrun below 1,000/min). Each keeps
 * EVERY sliding window under its limit, wherever the window starts (fixed
 * windows let two windows' worth through around a boundary). A call waits for
 * its send instant; only a wait past the step's remaining time fails it. A 429
 * pauses the whole egress schedule until its reset, every caller alike.
 */

/** Documented per-token limits per minute (unary). */
export const TBANK_LIMITS: Record<TBankService, number> = {
  UsersService: 100,
  OperationsService: 200,
  InstrumentsService: 200,
};

/** T-Bank's documented limits per IP address, across every token (limits.md). */
export const ADDRESS_LIMITS = { perSecond: 50, perMinute: 1000 } as const;

/**
 * The calls all our egress addresses may send, per minute and per second, kept
 * below the documented limits (5 % and 10 % headroom: a call's latency may
 * bunch sends that left in pace, and the addresses' shares are uneven).
 */
export type AddressLimits = { perSecond: number; perMinute: number };

export function egressLimits(addresses: number, limits: AddressLimits = ADDRESS_LIMITS): AddressLimits {
  return {
    perMinute: Math.max(1, Math.floor(addresses * limits.perMinute * 0.95)),
    perSecond: Math.max(1, Math.floor(addresses * limits.perSecond * 0.9)),
  };
}

/**
 * What one minute's tick may start (admission.ts): the calls the egress schedule sends in a
 * minute (the tick runs every real minute, whatever the scaled window), each attempt counted at
 * its real cost: `hourlyCost` (SYNC_CALLS_PER_SYNC) or `firstCost` (SYNC_CALLS_PER_FIRST_SYNC),
 * both measured with `npm run bench -- sync`.
 */
export function admitPolicy(
  addresses: number,
  windowMs: number,
  hourlyCost: number,
  firstCost: number,
  limits?: AddressLimits,
): AdmitPolicy {
  const pace = egressPaceOf(addresses, windowMs, limits);
  return {
    calls: Math.floor(60_000 / pace.intervalMs),
    hourlyCost,
    firstCost: Math.max(firstCost, hourlyCost),
    firstShare: FIRST_SYNC_SHARE,
    msPerCall: pace.intervalMs,
  };
}

/** A quiet token may send this share of its minute at once (a step's first calls); the rest is paced. */
export const TOKEN_BURST_SHARE = 0.25;

/** The token's pace for one service: every sliding "minute" under limits.md's limit less the headroom. */
export function tokenPaceOf(service: TBankService, windowMs: number, headroom = 0.05): Pace {
  return paceFor(Math.max(1, Math.floor(TBANK_LIMITS[service] * (1 - headroom))), windowMs, TOKEN_BURST_SHARE);
}

/** The egress addresses' pace: every sliding "minute" and "second" (a sixtieth of it) under their budget. */
export function egressPaceOf(addresses: number, windowMs: number, limits?: AddressLimits): Pace {
  const egress = egressLimits(addresses, limits);
  return stricter(
    paceFor(egress.perMinute, windowMs),
    paceFor(egress.perSecond, Math.max(1, Math.round(windowMs / 60))),
  );
}

/** The step's bound leaves no time for one more call (STEP_TIMEOUT, its own bound; a continuing section hands over). */
export class NoTimeLeftError extends TimeoutError {}

/** A send instant is not taken closer than this to the step's bound: the call itself needs time. */
const SEND_GUARD_MS = 1000;

export class SharedCallBudget implements CallBudget {
  /** Time spent waiting for a send instant, by schedule: the step reports it (TbankBudgetWait). */
  readonly waitedMs = { token: 0, egress: 0 };

  constructor(
    private readonly deps: {
      /** The pacing schedules, and the console's per-window counts of the token's calls. */
      data: Pick<SyncDataStore, 'takeRateSlot' | keyof PaceStore>;
      user: string;
      /** The limits' window: 60 s in production, scaled down in tests like the emulator's. */
      windowMs: number;
      /** Below the token's limits by this share. */
      headroom?: number;
      clock?: () => number;
      /** Waits (a simulated clock's in unit tests). */
      sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
      /** Our egress addresses (TBANK_EGRESS_ADDRESSES): the shared per-address budget; absent, none is kept. */
      egressAddresses?: number;
      /** The limits per address (limits.md's by default; a test scales them with its window). */
      addressLimits?: AddressLimits;
    },
  ) {}

  private now = () => (this.deps.clock ?? (() => performance.timeOrigin + performance.now()))();

  async acquire(service: TBankService, signal: AbortSignal, remainingMs: () => number): Promise<void> {
    const { windowMs, egressAddresses, user } = this.deps;
    const token = tokenPaceOf(service, windowMs, this.deps.headroom);
    await this.take(tokenPace(user, service), token, 'token', signal, remainingMs, "the token's budget");
    const now = this.now();
    const start = now - (now % windowMs);
    // The console's count needs no order: it is written while the egress instant is taken.
    await Promise.all([
      this.deps.data.takeRateSlot(user, service, start, Number.MAX_SAFE_INTEGER, start + 2 * windowMs + 60_000),
      egressAddresses && this.egress(egressAddresses, signal, remainingMs),
    ]);
  }

  private async egress(addresses: number, signal: AbortSignal, remainingMs: () => number): Promise<void> {
    const egress = egressPaceOf(addresses, this.deps.windowMs, this.deps.addressLimits);
    // A send instant taken before another caller's 429 paused the address is taken again after the pause.
    while (await this.take(EGRESS_PACE, egress, 'egress', signal, remainingMs, 'the egress addresses’ budget'))
      if ((await this.deps.data.pacePausedUntil(EGRESS_PACE)) <= this.now()) return;
  }

  /**
   * A 429 (x-ratelimit-reset): the token's own limit holds that token's calls to the service for
   * `ms`; an address's limit holds every call of our addresses (the token's alone without them).
   * Pausing the addresses for one token's 429 stopped every other connection's sync, and the tick,
   * reading the pause as a queue, admitted none for as long as one account stormed (decision 362).
   */
  async pause(ms: number, signal: AbortSignal, scope?: { service: TBankService; rateScope: RateScope }): Promise<void> {
    const { windowMs, egressAddresses, user } = this.deps;
    const until = this.now() + ms;
    if (scope?.rateScope === 'token') {
      const pace = tokenPaceOf(scope.service, windowMs, this.deps.headroom);
      return this.deps.data.pausePace(tokenPace(user, scope.service), until, pace, until + 2 * windowMs + 60_000);
    }
    if (!egressAddresses) return (this.deps.sleep ?? defaultSleep)(ms, signal);
    await this.deps.data.pausePace(
      EGRESS_PACE,
      until,
      egressPaceOf(egressAddresses, windowMs, this.deps.addressLimits),
      until + 2 * windowMs + 60_000,
    );
  }

  /** Takes the schedule's next send instant and waits for it; true when it waited. */
  private async take(
    key: string,
    pace: Pace,
    budget: keyof SharedCallBudget['waitedMs'],
    signal: AbortSignal,
    remainingMs: () => number,
    what: string,
  ): Promise<boolean> {
    const now = this.now();
    const remaining = remainingMs();
    // No time left for a call to come back: the step's own bound has run out, whatever the budget says.
    if (remaining <= SEND_GUARD_MS)
      throw new NoTimeLeftError(Math.max(0, Math.round(remaining)), 'the step, its next call');
    const latest = now + remaining - SEND_GUARD_MS;
    const taken = await this.deps.data.takePace(
      key,
      now,
      pace,
      latest,
      Math.max(now, latest) + 2 * this.deps.windowMs + 60_000,
    );
    if ('busyUntil' in taken)
      throw new PastBoundError(
        `${what}: the next call could leave in ${Math.round(taken.busyUntil - now)} ms, past the step's bound`,
      );
    const wait = taken.at - this.now();
    if (wait <= 0) return false;
    const began = performance.now();
    try {
      await (this.deps.sleep ?? defaultSleep)(wait, signal);
    } finally {
      this.waitedMs[budget] += performance.now() - began;
    }
    return true;
  }
}

const defaultSleep = (ms: number, signal: AbortSignal) =>
  sleep(ms, undefined, { signal }).catch(() => {
    throw signal.reason;
  });
