import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../clock';
import { Admission, AdmitPolicy, firstCallsOfMinute, isFirstSync, Refusal, Ticket } from './admission';
import type { Logger } from '../log';
import type { ConnectionService } from './connections';
import { DUE_SHARDS, dueShardOf } from './keys';
import { FIRST_PHASE, HourlyHead, SyncErrorCode } from './model';
import { newStepId } from './outcome';
import type { HourlyService, Reservation, Run } from './service';
import type { DueEntry } from './store';
import type { Dispatch, StepInput } from './step';

/**
 * The minute tick (lib/sync/README.md). It reads only the due index: one
 * query per shard for the users whose `due_at` has come (overdue included),
 * so an idle connection costs it nothing. Each due user is visited:
 * recovery, then reserveHourly, then the walk of a reserved attempt
 * (access.local, then one async step per mandatory section, each step id
 * written onto the attempt right after its dispatch). A visit that finds
 * nothing to do moves the user's entry to the next instant it can act. The
 * tick never waits for steps: the last step to finish, or a later visit,
 * settles at the terminal barrier.
 *
 * More due users than one invocation visits within its budget (`inlineMax`):
 * the tick fans out, one shard invocation per shard with due users
 * (`tickShard`, each with its own run deadline).
 */

export type { Dispatch } from './step';

export interface TickDeps {
  hourly: HourlyService;
  connections: ConnectionService;
  dispatch: Dispatch;
  now: Clock;
  log: Logger;
  run: Run;
  /**
   * Invokes the shard tick of `shard` asynchronously, with the calls its attempts may spend
   * (`quota`) and those of them first syncs may take (`firstQuota`); without it an oversized due
   * set is walked shard by shard here.
   */
  fanOut?: (shard: number, quota?: number, firstQuota?: number) => Promise<void>;
  /** Due users visited inline at most; more are fanned out (INLINE_MAX). */
  inlineMax?: number;
  /**
   * What this tick may start (admission.ts): attempts by the calls they will really spend, within
   * the egress budget of one minute, their dispatches spread at its pace. Due users past it are
   * deferred in due order, the reason counted: not reserved, their entries left due, so the next
   * tick takes them first. Absent: no limit.
   */
  admit?: AdmitPolicy;
  /**
   * The egress schedule's queue (pacer.ts `paceQueuedMs`): calls already waiting are taken off this
   * tick's budget, so an hourly cost set too low cannot let the queue grow past the steps' bound.
   */
  queuedMs?: (now: number) => Promise<number>;
  /** Waits until a spread dispatch's instant (a test's clock may replace it). */
  sleep?: (ms: number) => Promise<void>;
}

export type TickOutcome = Reservation['branch'] | Refusal | 'failed';

/** Users are independent (each guarded by its own conditional writes): work on a few at once. */
export const TICK_CONCURRENCY = 8;
/** Stop taking new users this close to the run's hard end; the next tick takes them (their entries stay due). */
export const TICK_MARGIN_MS = 5_000;
/**
 * Due users one tick visits itself. A visit that reserves costs ~12 DynamoDB
 * calls and 4 invokes (bench: `npm run bench -- sync`); 200 of them at
 * TICK_CONCURRENCY fit well within a minute's tick on a loaded table.
 */
export const INLINE_MAX = 200;

export async function tick(deps: TickDeps): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  if (pastMargin(deps)) return counts;
  const inlineMax = deps.inlineMax ?? INLINE_MAX;
  const now = deps.now();
  const policy = deps.admit;
  deps = await withQueue(deps, now);
  // First syncs keep their share of what the queue leaves, so the hourly syncs keep theirs.
  const firstCalls =
    policy && deps.admit && (firstCallsOfMinute(policy, Math.floor(now / 60_000)) * deps.admit.calls) / policy.calls;
  // One query per shard; each reads at most inlineMax + 1 entries, so an oversized set is seen without reading it.
  const due = await Promise.all(
    Array.from({ length: DUE_SHARDS }, async (_, shard) => collect(deps.hourly.dueEntries(shard, now, inlineMax + 1))),
  );
  const total = due.reduce((n, entries) => n + entries.length, 0);
  // Due order across the shards: the oldest due are admitted first.
  const ordered = due.flat().sort((a, b) => a.due_at - b.due_at || (a.user_id < b.user_id ? -1 : 1));
  if (total <= inlineMax) {
    await visitAll(deps, iterate(ordered.map((e) => e.user_id)), counts, admissionOf(deps, undefined, firstCalls));
  } else {
    const plan = deps.admit && planShards(deps.admit, ordered, firstCalls);
    const shards = due.flatMap((entries, shard) => (entries.length ? [shard] : []));
    for (const shard of shards) {
      const q = plan?.get(shard) ?? (plan ? { calls: 0, first: 0 } : undefined);
      if (q?.calls === 0) {
        // Nothing may start there this minute: its entries stay due (at least those read are counted).
        counts.deferred = (counts.deferred ?? 0) + due[shard].length;
        continue;
      }
      if (!deps.fanOut) {
        await visitAll(deps, deps.hourly.dueUsers(shard, now), counts, admissionOf(deps, q?.calls, q?.first));
        continue;
      }
      try {
        await deps.fanOut(shard, q?.calls, q?.first);
        counts.fanned_out = (counts.fanned_out ?? 0) + 1;
      } catch (err) {
        // Its entries stay due: the next tick fans out again.
        deps.log.error('sync_tick_fan_out_failed', { shard, err });
        counts.failed = (counts.failed ?? 0) + 1;
      }
    }
  }
  deps.log.info('sync_tick_done', { run_id: deps.run.run_id, due: total, admit: deps.admit, ...counts });
  return counts;
}

export const isDueShard = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < DUE_SHARDS;

/**
 * Each shard's calls, and first syncs' calls, from the tick's budget over the due entries in due
 * order: a new connection (its entry the connection's) at the first-sync cost within the first
 * syncs' share, any other at the hourly cost. Counting every entry at the hourly cost gave no shard
 * a share of one first sync, so past INLINE_MAX due entries no first sync ever started (decision 362).
 */
function planShards(
  policy: AdmitPolicy,
  ordered: DueEntry[],
  firstCalls?: number,
): Map<number, { calls: number; first: number }> {
  const plan = new Admission(policy, policy.calls, 0, 0, firstCalls);
  const quota = new Map<number, { calls: number; first: number }>();
  for (const entry of ordered) {
    if (!plan.take()) break;
    if (entry.fresh && plan.takeFirst()) continue; // refused: its cost went back
    const q = quota.get(dueShardOf(entry.user_id)) ?? { calls: 0, first: 0 };
    q.calls += entry.fresh ? policy.firstCost : policy.hourlyCost;
    if (entry.fresh) q.first += policy.firstCost;
    quota.set(dueShardOf(entry.user_id), q);
  }
  return quota;
}

/** One shard's due users, paged, until this invocation's own run deadline. */
export async function tickShard(
  deps: TickDeps,
  shard: number,
  quota?: number,
  firstQuota?: number,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  if (!isDueShard(shard)) throw new RangeError(`no due shard ${shard}`);
  await visitAll(deps, deps.hourly.dueUsers(shard, deps.now()), counts, admissionOf(deps, quota, firstQuota));
  deps.log.info('sync_tick_shard_done', { run_id: deps.run.run_id, shard, ...counts });
  return counts;
}

/** The tick's policy less the calls already queued on the egress schedule (none below zero). */
async function withQueue(deps: TickDeps, now: number): Promise<TickDeps> {
  if (!deps.admit || !deps.queuedMs) return deps;
  const queued = Math.ceil((await deps.queuedMs(now)) / deps.admit.msPerCall);
  return queued > 0 ? { ...deps, admit: { ...deps.admit, calls: Math.max(0, deps.admit.calls - queued) } } : deps;
}

/** The admission of this tick (or shard tick, `calls` and `first` its quotas): its dispatches spread until its margin. */
function admissionOf(deps: TickDeps, calls?: number, first?: number): Admission {
  const now = deps.now();
  return new Admission(deps.admit, calls, now, deps.run.run_deadline - TICK_MARGIN_MS - now, first);
}

/**
 * Visits due users in due order, a few at once. Once the admissions are spent the rest are
 * deferred without a visit: counted, their entries left due (the index read is all they cost).
 */
async function visitAll(
  deps: TickDeps,
  users: AsyncIterator<string>,
  counts: Record<string, number>,
  admission: Admission,
) {
  const count = (outcome: string) => (counts[outcome] = (counts[outcome] ?? 0) + 1);
  const worker = async () => {
    for (;;) {
      if (pastMargin(deps)) return;
      const next = await users.next();
      if (next.done) return;
      const ticket = admission.take();
      if (!ticket) {
        count('deferred');
        count('deferred_budget');
        continue;
      }
      try {
        const outcome = await tickUser(deps, next.value, { admission, ticket });
        if (outcome.startsWith('deferred')) count('deferred');
        count(outcome);
      } catch (err) {
        deps.log.error('sync_tick_user_failed', { user_id: next.value, err });
        count('failed');
      } finally {
        ticket.done();
      }
    }
  };
  await Promise.all(Array.from({ length: TICK_CONCURRENCY }, worker));
}

const pastMargin = (deps: TickDeps) => deps.now() > deps.run.run_deadline - TICK_MARGIN_MS;

async function collect<T>(items: AsyncGenerator<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

async function* iterate(users: string[]): AsyncGenerator<string> {
  yield* users;
}

/** Whether reserving now would start a new attempt (first, due, or a restart that is due). */
function startsAttempt(head: HourlyHead | undefined, now: number, hourly: HourlyService): boolean {
  if (!head) return true;
  const due = now >= hourly.dueAfter(head);
  if (head.state !== 'running') return due;
  return due && now >= head.run_deadline && !head.walk_completed;
}

/** One visit of one user: recovery, the reservation and its walk, or the move of its due entry. */
export async function tickUser(
  deps: TickDeps,
  user: string,
  admitted?: { admission: Admission; ticket: Ticket },
): Promise<TickOutcome> {
  const log = deps.log.child({ user_id: user, run_id: deps.run.run_id });
  const head = await deps.hourly.head(user);
  if (head?.state === 'running' && head.walk_completed) {
    // A second phase whose dispatch was lost with the step that owed it (claimed once: never twice).
    const sent = await deps.hourly.dispatchReady(user, head.attempt_id, deps.now(), (section, stepId) =>
      deps.dispatch({ user_id: user, attempt_id: head.attempt_id, step_id: stepId, section }),
    );
    if (sent.length) {
      log.warn('sync_second_phase_dispatched', { attempt_id: head.attempt_id, sections: sent });
      admitted?.admission.giveBack();
      return 'running';
    }
  }
  const recovered = head ? await deps.hourly.recover(head, deps.now()) : undefined;
  if (recovered && 'settled' in recovered)
    log.warn('sync_attempt_recovered', {
      attempt_id: head!.attempt_id,
      outcome: recovered.settled.state,
      error_code: recovered.settled.error_code,
    });

  // The head just read is the premise unless recovery wrote it or found it moved on.
  const unchanged = !recovered || ('skipped' in recovered && recovered.skipped === 'waiting');
  // When its calls may start: after those admitted before it, at the budget's pace.
  let startAt = 0;
  if (admitted) {
    const { admission, ticket } = admitted;
    // The visit holds an hourly sync's calls (visitAll); one that starts no attempt gives them back,
    // a first sync takes its real cost (or waits, its entry left due, for a later tick). Decided in
    // the order the visits were pulled (due order), whichever head read came back first.
    const current = unchanged ? head : await deps.hourly.head(user);
    await ticket.turn;
    try {
      let cost = admission.hourlyCost;
      if (!startsAttempt(current, deps.now(), deps.hourly)) admission.giveBack();
      else {
        if (isFirstSync(current)) {
          const refused = admission.takeFirst();
          if (refused) {
            log.info('sync_attempt_deferred', { reason: refused });
            return refused;
          }
          cost = admission.policy?.firstCost ?? cost;
        }
        startAt = admission.startAt(cost);
      }
    } finally {
      ticket.done();
    }
  }
  const reservation = await deps.hourly.reserveHourly(user, deps.now(), deps.run, unchanged ? { head } : undefined);
  if (reservation.branch === 'restart') log.warn('sync_attempt_interrupted', { outcome: reservation.closed.state });
  if (!('head' in reservation) || !reservation.head) {
    if ('current' in reservation && reservation.current) await deps.hourly.defer(reservation.current, deps.now());
    return reservation.branch;
  }

  const attempt = reservation.head;
  log.info('sync_attempt_reserved', { attempt_id: attempt.attempt_id, branch: reservation.branch });
  // Spread: its calls should arrive after those admitted before it (its head is written: no other tick takes it).
  const wait = startAt ? startAt - deps.now() : 0;
  if (wait > 0) await (deps.sleep ?? sleep)(wait);
  if (!(await deps.connections.hasToken(user))) {
    // access.local: without a token no section can run.
    await deps.hourly.markWalkCompleted(attempt, deps.now());
    await deps.hourly.settleHourly(user, attempt.attempt_id, deps.now(), { cause: SyncErrorCode.ACCESS_DENIED });
    return reservation.branch;
  }
  // The first phase; a step whose finish completes a dependency dispatches the second (step.ts).
  for (const section of FIRST_PHASE) {
    const step: StepInput = { user_id: user, attempt_id: attempt.attempt_id, step_id: newStepId(deps.now()), section };
    try {
      await deps.dispatch(step);
    } catch (err) {
      // No durable row will exist: settle reports the section as DISPATCH_FAILED.
      log.error('sync_dispatch_failed', { attempt_id: attempt.attempt_id, section, err });
      continue;
    }
    await deps.hourly.recordDispatch(user, attempt.attempt_id, section, step.step_id);
  }
  await deps.hourly.markWalkCompleted(attempt, deps.now());
  await deps.hourly.settleHourly(user, attempt.attempt_id, deps.now());
  return reservation.branch;
}
