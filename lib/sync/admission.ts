import type { HourlyHead } from './model';

/**
 * What a tick may start (lib/sync/tick.ts): attempts are admitted by the T-Bank calls they will
 * really spend, from the connection's history, against the egress budget of one tick's minute; and
 * their dispatches are spread over the tick so that their calls arrive at the budget's pace instead
 * of queueing behind each other (a step waits for its calls' send instants only within its own
 * bound: a long queue would end attempts `partial`).
 */

export interface AdmitPolicy {
  /** T-Bank calls the attempts started by one tick may spend: the egress budget of one minute. */
  calls: number;
  /** Calls an hourly sync costs (SYNC_CALLS_PER_SYNC) and a first sync, years of history (SYNC_CALLS_PER_FIRST_SYNC). */
  hourlyCost: number;
  firstCost: number;
  /**
   * The share of `calls` first syncs may take: when more are new than that allows, the rest wait
   * in due order for later ticks (spread across hours) and the hourly syncs behind them still start.
   */
  firstShare: number;
  /** The egress schedule's spacing of calls (ms): dispatches are spread no denser than it. */
  msPerCall: number;
}

/** The share of a tick's calls first syncs may take (decision 322). */
export const FIRST_SYNC_SHARE = 0.5;

/**
 * Whether the next attempt of this connection is a first sync: no attempt yet, or the last one
 * did not get its operations (the section that reads years of history until it once succeeds).
 */
export function isFirstSync(head: HourlyHead | undefined): boolean {
  if (!head) return true;
  return head.sections?.operations?.state !== 'succeeded';
}

export type Refusal = 'deferred_budget' | 'deferred_first_share';

/**
 * The budget of one tick (or one shard tick): a visit takes the hourly cost as it is pulled, in due
 * order (so workers racing cannot admit a later user ahead of an earlier one), tops it up to the
 * first-sync cost once the head shows one, and gives it back when it starts no attempt.
 */
export class Admission {
  private left: number;
  private firstLeft: number;
  private spent = 0;
  private readonly msPerCall: number;

  /** `calls`: this tick's (or shard's) calls; `spreadMs`: the time its dispatches may be spread over. */
  constructor(
    readonly policy: AdmitPolicy | undefined,
    calls: number = policy?.calls ?? Infinity,
    private readonly startedAt = 0,
    spreadMs = 0,
  ) {
    this.left = calls;
    this.firstLeft = policy ? calls * policy.firstShare : Infinity;
    this.msPerCall = policy && calls > 0 ? Math.min(policy.msPerCall, Math.max(0, spreadMs) / calls) : 0;
  }

  get hourlyCost(): number {
    return this.policy?.hourlyCost ?? 1;
  }

  /** Takes `calls` (a pulled visit's provisional hourly cost); false when the tick's calls are spent. */
  take(calls = this.hourlyCost): boolean {
    if (this.left < calls || this.left <= 0) return false;
    this.left -= calls;
    return true;
  }

  giveBack(calls = this.hourlyCost): void {
    this.left += calls;
  }

  /** A first sync: takes its extra cost, within the first syncs' share; else the visit's cost goes back. */
  takeFirst(): Refusal | undefined {
    if (!this.policy) return undefined;
    const extra = this.policy.firstCost - this.policy.hourlyCost;
    if (extra > this.left) return this.refuse('deferred_budget');
    if (this.firstLeft < this.policy.firstCost) return this.refuse('deferred_first_share');
    if (extra > 0) this.take(extra);
    this.firstLeft -= this.policy.firstCost;
    return undefined;
  }

  /** The instant an admitted attempt of `calls` may be dispatched: after the calls admitted before it, at the budget's pace. */
  startAt(calls: number): number {
    const at = this.startedAt + this.spent * this.msPerCall;
    this.spent += calls;
    return at;
  }

  get exhausted(): boolean {
    return this.left < this.hourlyCost || this.left <= 0;
  }

  private refuse(reason: Refusal): Refusal {
    this.giveBack();
    return reason;
  }
}
