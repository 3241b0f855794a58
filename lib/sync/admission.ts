import { HourlyHead, SyncErrorCode } from './model';

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

/** Codes of a token T-Bank refused (or no token at all): the attempt ended at its first call. */
const REFUSED_TOKEN: ReadonlySet<string> = new Set([
  SyncErrorCode.TOKEN_INVALID,
  SyncErrorCode.INSUFFICIENT_RIGHTS,
  SyncErrorCode.UNAUTHORIZED,
  SyncErrorCode.ACCESS_DENIED,
]);

/**
 * Whether the next attempt of this connection is charged as a first sync: no attempt yet, or the
 * last one did not get its operations (the section that reads years of history until it once
 * succeeds). Not when the last one's token was refused: that attempt costs the call that is refused
 * again, and charged as a first sync every hour such connections would take the first syncs' share
 * from the new ones (decision 362). A new token (PUT again) makes it due at once and, if it opens,
 * its operations run as a first sync does; the queue feedback absorbs the estimate's error.
 */
export function isFirstSync(head: HourlyHead | undefined): boolean {
  if (!head) return true;
  const operations = head.sections?.operations;
  if (operations?.state === 'succeeded') return false;
  const code = operations?.error_code ?? head.error_code;
  return !(code !== undefined && REFUSED_TOKEN.has(code));
}

export type Refusal = 'deferred_budget' | 'deferred_first_share';

/**
 * The calls first syncs may take in the tick of epoch minute `minute`: whole first syncs, as many
 * as keep the share's average over the minutes (at the defaults 474.5 / 150 = 3.16 a minute: three,
 * and four in about every sixth minute). Rounded down per tick, the fraction was lost every minute
 * and 200 new connections took 67 minutes, not the 64 the share allows. Stateless: the minute's
 * number decides, so ticks need no counter between them (decision 362).
 */
export function firstCallsOfMinute(policy: AdmitPolicy, minute: number): number {
  const perMinute = (policy.calls * policy.firstShare) / policy.firstCost;
  return (Math.floor((minute + 1) * perMinute) - Math.floor(minute * perMinute)) * policy.firstCost;
}

/**
 * A visit's place in the admission order: taken as the visit is pulled (in due order), its decision
 * (`turn`, then `done`) waits for the decisions of every visit pulled before it. Visits read their
 * heads concurrently; without the order, whichever read came back first took the first syncs'
 * share, so a new connection could be passed over tick after tick by later ones (decision 362).
 */
export interface Ticket {
  turn: Promise<void>;
  /** Releases the next visit's decision (idempotent; every path of a visit calls it). */
  done: () => void;
}

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

  private last: Promise<void> = Promise.resolve();

  /**
   * `calls`: this tick's (or shard's) calls; `firstCalls`: those first syncs may take (default the
   * policy's share of `calls`; a shard gets its share of the tick's plan); `spreadMs`: the time its
   * dispatches may be spread over.
   */
  constructor(
    readonly policy: AdmitPolicy | undefined,
    calls: number = policy?.calls ?? Infinity,
    private readonly startedAt = 0,
    spreadMs = 0,
    firstCalls?: number,
  ) {
    this.left = calls;
    this.firstLeft = policy ? (firstCalls ?? calls * policy.firstShare) : Infinity;
    this.msPerCall = policy && calls > 0 ? Math.min(policy.msPerCall, Math.max(0, spreadMs) / calls) : 0;
  }

  get hourlyCost(): number {
    return this.policy?.hourlyCost ?? 1;
  }

  /** Takes `calls` (a pulled visit's provisional hourly cost) and the visit's place in the order; none when the calls are spent. */
  take(calls = this.hourlyCost): Ticket | undefined {
    if (this.left < calls || this.left <= 0) return undefined;
    this.left -= calls;
    const turn = this.last;
    let done!: () => void;
    this.last = new Promise<void>((resolve) => (done = resolve));
    return { turn, done };
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
    if (extra > 0) this.left -= extra;
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
