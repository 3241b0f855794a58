import { setTimeout as sleep } from 'node:timers/promises';
import type { SyncDataStore } from './data-store';
import type { CallBudget } from './tbank/client';
import type { TBankService } from './tbank/contract';
import { TBankError } from './tbank/errors';

/**
 * The token's per-service call budget, shared by every step of the user in
 * any invocation: a counter per fixed window in the table (conditional ADD),
 * never process memory. A spent window waits for the next one (pacing), and
 * only a wait longer than the step's remaining time fails the call.
 */

/** Documented per-token limits per minute (unary). */
export const TBANK_LIMITS: Record<TBankService, number> = {
  UsersService: 100,
  OperationsService: 200,
  InstrumentsService: 200,
};

export class SharedCallBudget implements CallBudget {
  constructor(
    private readonly deps: {
      data: Pick<SyncDataStore, 'takeRateSlot'>;
      user: string;
      /** The limits' window: 60 s in production, scaled down in tests like the emulator's. */
      windowMs: number;
      /** Below the limit by this share: a call taken at a window's end may land in the next one. */
      headroom?: number;
      clock?: () => number;
    },
  ) {}

  async acquire(service: TBankService, signal: AbortSignal, remainingMs: () => number): Promise<void> {
    const clock = this.deps.clock ?? (() => performance.timeOrigin + performance.now());
    const limit = Math.max(1, Math.floor(TBANK_LIMITS[service] * (1 - (this.deps.headroom ?? 0.05))));
    for (;;) {
      const now = clock();
      const start = now - (now % this.deps.windowMs);
      if (
        await this.deps.data.takeRateSlot(
          this.deps.user,
          service,
          start,
          limit,
          start + 2 * this.deps.windowMs + 60_000,
        )
      )
        return;
      const wait = start + this.deps.windowMs - now + 10;
      if (wait >= remainingMs())
        throw new TBankError(
          'rate-limited',
          `${service}: the token's budget of ${limit} calls is spent until the window resets`,
        );
      await sleep(wait, undefined, { signal }).catch(() => {
        throw signal.reason;
      });
    }
  }
}
