import { newId } from '../ident';
import { StaleAttemptError } from './errors';
import { emitMetrics } from '../metrics';
import { HOUR_MS, HourlyHead, Section, StepReport, StepRow, StepState, SyncErrorCode } from './model';
import {
  barrierReached,
  Derived,
  deriveOutcome,
  finishedBefore,
  newStepId,
  nextWaitEnd,
  readyToDispatch,
} from './outcome';
import type { DueEntry, HourlyStore } from './store';

/**
 * The policy of the hourly design (lib/sync/README.md): which branch a visit
 * takes, the outcome an attempt settles with, and when the tick must look at
 * a user next (`due_at`, the due index). Each decision is written by ONE
 * conditional write of the store, whose condition is the branch's premise
 * (the head as read: attempt_id, revision, state; the pinned rows): a premise
 * that no longer holds makes the write fail, and the visit is `raced`.
 */

export interface Run {
  run_id: string;
  /** Epoch ms: the invocation's hard end (start + Lambda timeout). */
  run_deadline: number;
}

export type Reservation =
  | { branch: 'first' | 'due'; head: HourlyHead; previous?: HourlyHead['state'] }
  | { branch: 'restart'; head?: HourlyHead; closed: Derived }
  | { branch: 'running' | 'not-due' | 'raced'; current?: HourlyHead };

export type SettleResult = { settled: Derived } | { skipped: 'not-running' | 'waiting' };

/** A step settles right after its finish; rows all finished this long ago mean that settle failed. */
export const SETTLE_GRACE_MS = 60_000;

export interface HourlyServiceDeps {
  store: HourlyStore;
  /** How long the steps of an attempt are waited for (the terminal barrier). */
  waitBoundMs: number;
  /** The sync "hour" (SYNC_HOUR_MS): a user is due this long after its last start. */
  hourMs?: number;
}

export class HourlyService {
  constructor(private readonly deps: HourlyServiceDeps) {}

  private get store() {
    return this.deps.store;
  }

  /** The sync "hour": HOUR_MS unless SYNC_HOUR_MS shortens it (soaks). */
  get hourMs(): number {
    return this.deps.hourMs ?? HOUR_MS;
  }

  /** WORK_WAIT_BOUND_MS: how long the attempt waits for each step from its dispatch. */
  get waitBoundMs(): number {
    return this.deps.waitBoundMs;
  }

  /** When the attempt after `head` is due: an hour after its start, or at once when re-keyed since (decision 362). */
  dueAfter(head: Pick<HourlyHead, 'started_at' | 'rekeyed_at'>): number {
    const rekeyed = head.rekeyed_at ?? 0;
    return rekeyed > head.started_at ? rekeyed : head.started_at + this.hourMs;
  }

  head(user: string): Promise<HourlyHead | undefined> {
    return this.store.head(user);
  }

  stepRows(attemptId: string): Promise<StepRow[]> {
    return this.store.stepRows(attemptId);
  }

  /** The user's attempts, newest first (the console's strip); the current one from the head, the fresher copy. */
  async attempts(user: string, limit: number): Promise<HourlyHead[]> {
    const [records, head] = await Promise.all([this.store.attempts(user, limit), this.store.head(user)]);
    return head ? [head, ...records.filter((r) => r.attempt_id !== head.attempt_id)].slice(0, limit) : records;
  }

  headsOf(users: string[]): Promise<HourlyHead[]> {
    return users.length ? this.store.headsOf(users) : Promise.resolve([]);
  }

  /** The attempt with its step rows; while it is the user's current attempt the head is fresher than its record. */
  async attempt(attemptId: string): Promise<(HourlyHead & { rows: StepRow[] }) | undefined> {
    const record = await this.store.attemptRecord(attemptId);
    if (!record) return undefined;
    const head = await this.store.head(record.user_id);
    const current = head?.attempt_id === attemptId ? head : record;
    return { ...current, rows: await this.store.stepRows(attemptId) };
  }

  /**
   * The branches of the hourly design, each ONE conditional write.
   * first: no head yet. running: a live attempt (its run not over, or its walk
   * done and steps still within their wait): skip. restart: running but its run
   * is over mid-walk: close it INTERRUPTED in the same transaction, then the due
   * gate. succeeded/partial/failed: the due gate (an hour after the last start).
   * `seen`: the head the caller has just read consistently (saves a read).
   */
  async reserveHourly(
    user: string,
    now: number,
    run: Run,
    seen?: { head: HourlyHead | undefined },
  ): Promise<Reservation> {
    const head = seen ? seen.head : await this.store.head(user);
    const fresh = (): HourlyHead => ({
      user_id: user,
      attempt_id: newId(now),
      state: 'running',
      started_at: now,
      run_id: run.run_id,
      run_deadline: run.run_deadline,
      walk_completed: false,
      children: {},
      revision: (head?.revision ?? 0) + 1,
      // If this run dies mid-walk, the restart branch can act once its run is over.
      due_at: run.run_deadline,
    });

    if (!head) {
      const next = fresh();
      return (await this.store.putFirstHead(next)) ? { branch: 'first', head: next } : { branch: 'raced' };
    }
    const due = now >= this.dueAfter(head);
    if (head.state === 'running') {
      if (now < head.run_deadline || head.walk_completed) return { branch: 'running', current: head };
      const rows = await this.store.stepRows(head.attempt_id);
      const closed = deriveOutcome({ head, rows, cause: SyncErrorCode.INTERRUPTED });
      const closedHead = this.closedHead(head, closed, now);
      const next = due ? fresh() : undefined;
      const written = await this.store.replaceHead(head, next ?? closedHead, {
        whileRunning: true,
        rows,
        records: next ? [closedHead, next] : [closedHead],
      });
      if (!written) return { branch: 'raced' };
      settledMetrics(head, closed);
      if (next) startedMetrics(head, next, this.hourMs);
      return { branch: 'restart', head: next, closed };
    }
    if (!due) return { branch: 'not-due', current: head };
    const next = fresh();
    const written = await this.store.replaceHead(head, next, { whileRunning: false, records: [next] });
    if (!written) return { branch: 'raced' };
    startedMetrics(head, next, this.hourMs);
    return { branch: 'due', head: next, previous: head.state };
  }

  /** Writes the step id onto the attempt right after dispatch, before any wait. */
  recordDispatch(user: string, attemptId: string, section: Section, stepId: string): Promise<void> {
    return this.store.updateRunningHead(user, attemptId, { dispatched: { section, stepId } });
  }

  /**
   * The attempt's second phase (model.ts SECTION_DEPENDS_ON): every section whose dependencies
   * have all succeeded and that has no step yet is claimed (ONE conditional write, so racing
   * finishers dispatch it once) and then dispatched. A claim whose dispatch fails has no row:
   * the attempt settles it as DISPATCH_FAILED at its wait bound. Nothing is sent once that bound
   * has passed. Returns the sections sent.
   */
  async dispatchReady(
    user: string,
    attemptId: string,
    now: number,
    dispatch: (section: Section, stepId: string) => Promise<void>,
  ): Promise<Section[]> {
    const head = await this.store.head(user);
    if (!head || head.attempt_id !== attemptId || head.state !== 'running') return [];
    // A section whose own dispatch window is over is not sent: the barrier settles it as it stands.
    const sent: Section[] = [];
    for (const section of readyToDispatch(head, await this.store.stepRows(attemptId), now, this.deps.waitBoundMs)) {
      const stepId = newStepId(now);
      if (!(await this.store.claimDispatch(user, attemptId, section, stepId))) continue;
      await dispatch(section, stepId);
      sent.push(section);
    }
    return sent;
  }

  /** The walk is over: from now on only the steps' wait (or a lost settle) keeps the attempt running. */
  markWalkCompleted(attempt: HourlyHead, now: number): Promise<void> {
    return this.store.updateRunningHead(attempt.user_id, attempt.attempt_id, {
      walkCompleted: true,
      dueAt: this.nextLook({ ...attempt, state: 'running', walk_completed: true }, now),
    });
  }

  /**
   * Derives the outcome from the rows it read and writes it in ONE transaction
   * that pins those rows (a row finishing meanwhile cancels it, and we read
   * again) — a CAS from `running` only. Without a cause it waits for the
   * terminal barrier ('waiting'). `lostIfFinishedBefore`: when every dispatched
   * step finished before that instant, the settle that should have followed
   * was lost: cause INTERRUPTED.
   */
  async settleHourly(
    user: string,
    attemptId: string,
    now: number,
    opts: {
      cause?: typeof SyncErrorCode.INTERRUPTED | typeof SyncErrorCode.ACCESS_DENIED;
      lostIfFinishedBefore?: number;
    } = {},
  ): Promise<SettleResult> {
    for (let turn = 0; turn < 10; turn++) {
      const head = await this.store.head(user);
      if (!head || head.attempt_id !== attemptId || head.state !== 'running') return { skipped: 'not-running' };
      const rows = await this.store.stepRows(attemptId);
      const lost = opts.lostIfFinishedBefore !== undefined && finishedBefore(head, rows, opts.lostIfFinishedBefore);
      const cause = opts.cause ?? (lost ? SyncErrorCode.INTERRUPTED : undefined);
      if (!cause && !barrierReached(head, rows, now, this.deps.waitBoundMs)) return { skipped: 'waiting' };
      const settled = deriveOutcome({ head, rows, cause });
      const closed = this.closedHead(head, settled, now);
      if (await this.store.replaceHead(head, closed, { whileRunning: true, rows, records: [closed] })) {
        settledMetrics(head, settled);
        return { settled };
      }
    }
    throw new Error(`settleHourly ${attemptId}: rows kept changing`);
  }

  /**
   * Recovery of a walked attempt still running: past the wait bound it is
   * settled as it stands (DEADLINE for late steps); when every step finished
   * long ago, the settle that should have followed failed: close it
   * INTERRUPTED (at most partial). A run that died mid-walk is reserveHourly's
   * `restart` branch.
   */
  async recover(head: HourlyHead, now: number): Promise<SettleResult | undefined> {
    if (head.state !== 'running' || !head.walk_completed) return undefined;
    return this.settleHourly(head.user_id, head.attempt_id, now, { lostIfFinishedBefore: now - SETTLE_GRACE_MS });
  }

  /**
   * A visit that found nothing to do: moves the head's due entry to the next
   * instant a visit can act (conditional on the revision read, so a writer
   * that moved the head meanwhile keeps its own). Nothing when it is already
   * in the future (a stale index entry).
   */
  async defer(head: HourlyHead, now: number): Promise<boolean> {
    if (head.due_at !== undefined && head.due_at > now) return false;
    return this.store.deferHead(head.user_id, head.revision, this.nextLook(head, now));
  }

  /** The users whose due entry in `shard` is at or before `now` (the index is eventually consistent: re-read the head). */
  async *dueUsers(shard: number, now: number, limit?: number): AsyncGenerator<string> {
    for await (const entry of this.store.dueEntries(shard, now, limit)) yield entry.user_id;
  }

  /** The due entries of `shard`, oldest due first. */
  dueEntries(shard: number, now: number, limit?: number): AsyncGenerator<DueEntry> {
    return this.store.dueEntries(shard, now, limit);
  }

  startStep(user: string, row: StepRow): Promise<'started' | 'continued' | 'exists'> {
    return this.store.startStep(user, row);
  }

  /**
   * Hands a section over to a continuation step `nextStepId` (decision 326), only while that step's
   * own bound (`stepBoundMs` from now) still ends within the attempt's wait bound: every step of the
   * attempt, continuations included, ends within WORK_WAIT_BOUND_MS of its start. false when it would
   * not (the section finishes as it stands); StaleAttemptError when the attempt or the row moved on.
   */
  async continueStep(
    user: string,
    row: Pick<StepRow, 'attempt_id' | 'section' | 'step_id'>,
    next: { step_id: string; resume: Record<string, string> },
    now: number,
    stepBoundMs: number,
  ): Promise<boolean> {
    const head = await this.store.head(user);
    if (!head || head.attempt_id !== row.attempt_id || head.state !== 'running')
      throw new StaleAttemptError(row.attempt_id);
    // Each step has its own wait bound; the chain ends within the attempt's hour, so the next attempt
    // is never held behind it (decision 364; every continuation synced at least one window).
    if (now + stepBoundMs >= head.started_at + this.hourMs) return false;
    await this.store.continueStep(user, row, next);
    return true;
  }

  finishStep(
    user: string,
    row: Pick<StepRow, 'attempt_id' | 'section' | 'step_id'>,
    state: Exclude<StepState, 'running'>,
    now: number,
    errorCode?: string,
    trackingId?: string,
    report: StepReport = {},
  ): Promise<void> {
    return this.store.finishStep(user, row, {
      state,
      finished_at: now,
      ...(errorCode ? { error_code: errorCode } : {}),
      ...(trackingId ? { tracking_id: trackingId } : {}),
      ...report,
    });
  }

  /**
   * The next instant a visit to this head can change anything:
   * - settled: the due gate, an hour after its start;
   * - running mid-walk: its run's end (then `restart` can act);
   * - walked, steps out: a lost settle is recoverable SETTLE_GRACE after the
   *   last finish, and each step's wait bound (from its dispatch) settles what
   *   is left; a visit before either pushes it on by SETTLE_GRACE.
   * Never earlier than now + 1 s, so a visit that cannot act is not repeated at once.
   */
  nextLook(
    head: Pick<HourlyHead, 'state' | 'started_at' | 'walk_completed' | 'run_deadline'> &
      Partial<Pick<HourlyHead, 'children' | 'rekeyed_at'>>,
    now: number,
  ): number {
    const floor = now + 1000;
    if (head.state !== 'running') return Math.max(this.dueAfter(head), floor);
    if (!head.walk_completed) return Math.max(head.run_deadline, floor);
    const waitEnds = nextWaitEnd(head, now, this.deps.waitBoundMs) ?? Infinity;
    return Math.max(Math.min(waitEnds, now + SETTLE_GRACE_MS), floor);
  }

  private closedHead(head: HourlyHead, outcome: Derived, now: number): HourlyHead {
    return {
      ...head,
      state: outcome.state,
      finished_at: now,
      error_code: outcome.error_code,
      sections: outcome.sections,
      revision: head.revision + 1,
      due_at: this.dueAfter(head),
    };
  }
}

// --- metrics (lib/metrics/catalog.ts): emitted once per write that won, so a raced visit counts nothing ---

/** An attempt settled: its outcome, its first problem, and whether it counts against the hour's alarm. */
function settledMetrics(head: HourlyHead, settled: Derived): void {
  emitMetrics(
    { SyncAttempts: 1, SyncAttemptsNotSucceeded: settled.state === 'succeeded' ? 0 : 1 },
    { outcome: settled.state, cause: settled.error_code ?? 'none' },
    { user_id: head.user_id, attempt_id: head.attempt_id },
  );
}

/** A new attempt of a user seen before: how late it starts against its hour (the previous start + 1 h). */
function startedMetrics(previous: HourlyHead, next: HourlyHead, hourMs: number): void {
  emitMetrics(
    { SyncAttemptLateness: next.started_at - (previous.started_at + hourMs) },
    {},
    { user_id: next.user_id, attempt_id: next.attempt_id },
  );
}
