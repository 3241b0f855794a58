import { Clock, systemClock } from '../clock';
import type { CheckStatus } from './check';

/**
 * The public healthcheck's view of the dependencies: each component's last known state, from a refresh that
 * runs at most once per `intervalMs` in this container whatever the request rate, so the public route can never
 * be used to hammer a dependency. A request waits for a refresh in flight only up to `waitMs`; it never starts
 * one before the interval has passed.
 */

export type KnownState = CheckStatus | 'unknown';

export interface LastKnownView {
  status: 'ok' | 'degraded' | 'unknown';
  checks: Record<string, KnownState>;
  /** Seconds since the states were measured; null before the first refresh has landed. */
  checked_s_ago: number | null;
}

export interface LastKnownOptions {
  components: readonly string[];
  /** One refresh of every component: each probe already bounded by its own timeout. */
  refresh: () => Promise<Record<string, CheckStatus>>;
  intervalMs: number;
  /** How long a request may wait for the refresh in flight before it answers with what is known. */
  waitMs: number;
  /**
   * A refresh that took longer than this was not measuring "now": its container was frozen mid-probe (Lambda
   * freezes a container between invocations) or it hung. Its result is dropped, and a new refresh may start.
   */
  staleAfterMs: number;
  now?: Clock;
}

export class LastKnownHealth {
  private states: Record<string, KnownState>;
  private checkedAt: number | undefined;
  private inFlight: { startedAt: number; done: Promise<void> } | undefined;
  private lastStart = Number.NEGATIVE_INFINITY;
  private readonly now: Clock;

  constructor(private readonly opts: LastKnownOptions) {
    this.now = opts.now ?? systemClock;
    this.states = Object.fromEntries(opts.components.map((name) => [name, 'unknown' as const]));
  }

  async read(): Promise<LastKnownView> {
    const pending = this.refreshIfDue();
    if (pending) await waitAtMost(pending, this.opts.waitMs);
    return this.view();
  }

  /** The refresh in flight, a new one when the interval has passed, or undefined. */
  private refreshIfDue(): Promise<void> | undefined {
    const now = this.now();
    if (this.inFlight && now - this.inFlight.startedAt < this.opts.staleAfterMs) return this.inFlight.done;
    if (now - this.lastStart < this.opts.intervalMs) return undefined;
    this.lastStart = now;
    const run = { startedAt: now, done: Promise.resolve() };
    run.done = this.opts
      .refresh()
      .then((checks) => this.land(run.startedAt, checks))
      // A refresh that failed as a whole keeps the last known states: each probe reports its own `down`.
      .catch(() => undefined)
      .finally(() => {
        if (this.inFlight === run) this.inFlight = undefined;
      });
    this.inFlight = run;
    return run.done;
  }

  private land(startedAt: number, checks: Record<string, CheckStatus>): void {
    if (this.now() - startedAt > this.opts.staleAfterMs) return;
    if (this.checkedAt !== undefined && startedAt < this.checkedAt) return; // an older measurement lands late
    for (const name of this.opts.components) this.states[name] = checks[name] ?? 'unknown';
    this.checkedAt = startedAt;
  }

  private view(): LastKnownView {
    const checks = { ...this.states };
    const values = Object.values(checks);
    const status = values.includes('down') ? 'degraded' : values.includes('unknown') ? 'unknown' : 'ok';
    const checkedSAgo =
      this.checkedAt === undefined ? null : Math.max(0, Math.floor((this.now() - this.checkedAt) / 1000));
    return { status, checks, checked_s_ago: checkedSAgo };
  }
}

function waitAtMost(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() =>
    clearTimeout(timer),
  );
}
