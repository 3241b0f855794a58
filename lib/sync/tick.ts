import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../clock';
import { Admission, AdmitPolicy, isFirstSync, Refusal } from './admission';
import type { Logger } from '../log';
import type { ConnectionService } from './connections';
import { DUE_SHARDS, dueShardOf } from './keys';
import { FIRST_PHASE, HourlyHead, SyncErrorCode } from './model';
import { newStepId } from './outcome';
import type { HourlyService, Reservation, Run } from './service';
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
   * Invokes the shard tick of `shard` asynchronously, with the attempts it may start (`quota`);
   * without it an oversized due set is walked shard by shard here.
   */
  fanOut?: (shard: number, quota?: number) => Promise<void>;
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
  deps = await withQueue(deps, now);
  // One query per shard; each reads at most inlineMax + 1 entries, so an oversized set is seen without reading it.
  const due = await Promise.all(
    Array.from({ length: DUE_SHARDS }, async (_, shard) => collect(deps.hourly.dueEntries(shard, now, inlineMax + 1))),
  );
  const total = due.reduce((n, entries) => n + entries.length, 0);
  // Due order across the shards: the oldest due are admitted first.
  const ordered = due.flat().sort((a, b) => a.due_at - b.due_at || (a.user_id < b.user_id ? -1 : 1));
  if (total <= inlineMax) {
    await visitAll(deps, iterate(ordered.map((e) => e.user_id)), counts, admissionOf(deps));
  } else {
    // Each shard's quota of calls: the hourly cost of its entries among those the budget covers, in due order.
    const hourly = deps.admit?.hourlyCost ?? 1;
    const quota = new Map<number, number>();
    for (const e of ordered.slice(0, deps.admit ? Math.floor(deps.admit.calls / hourly) : Infinity))
      quota.set(dueShardOf(e.user_id), (quota.get(dueShardOf(e.user_id)) ?? 0) + hourly);
    const shards = due.flatMap((entries, shard) => (entries.length ? [shard] : []));
    for (const shard of shards) {
      const q = deps.admit === undefined ? undefined : (quota.get(shard) ?? 0);
      if (q === 0) {
        // Nothing may start there this minute: its entries stay due (at least those read are counted).
        counts.deferred = (counts.deferred ?? 0) + due[shard].length;
        continue;
      }
      if (!deps.fanOut) {
        await visitAll(deps, deps.hourly.dueUsers(shard, now), counts, admissionOf(deps, q));
        continue;
      }
      try {
        await deps.fanOut(shard, q);
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

/** One shard's due users, paged, until this invocation's own run deadline. */
export async function tickShard(deps: TickDeps, shard: number, quota?: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  if (!isDueShard(shard)) throw new RangeError(`no due shard ${shard}`);
  await visitAll(deps, deps.hourly.dueUsers(shard, deps.now()), counts, admissionOf(deps, quota));
  deps.log.info('sync_tick_shard_done', { run_id: deps.run.run_id, shard, ...counts });
  return counts;
}

/** The tick's policy less the calls already queued on the egress schedule (none below zero). */
async function withQueue(deps: TickDeps, now: number): Promise<TickDeps> {
  if (!deps.admit || !deps.queuedMs) return deps;
  const queued = Math.ceil((await deps.queuedMs(now)) / deps.admit.msPerCall);
  return queued > 0 ? { ...deps, admit: { ...deps.admit, calls: Math.max(0, deps.admit.calls - queued) } } : deps;
}

/** The admission of this tick (or shard tick, `calls` its quota): its dispatches spread until its margin. */
function admissionOf(deps: TickDeps, calls?: number): Admission {
  const now = deps.now();
  return new Admission(deps.admit, calls, now, deps.run.run_deadline - TICK_MARGIN_MS - now);
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
      if (!admission.take()) {
        count('deferred');
        count('deferred_budget');
        continue;
      }
      try {
        const outcome = await tickUser(deps, next.value, admission);
        if (outcome.startsWith('deferred')) count('deferred');
        count(outcome);
      } catch (err) {
        deps.log.error('sync_tick_user_failed', { user_id: next.value, err });
        count('failed');
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
function startsAttempt(head: HourlyHead | undefined, now: number, hourMs: number): boolean {
  if (!head) return true;
  const due = now >= head.started_at + hourMs;
  if (head.state !== 'running') return due;
  return due && now >= head.run_deadline && !head.walk_completed;
}

/** One visit of one user: recovery, the reservation and its walk, or the move of its due entry. */
export async function tickUser(deps: TickDeps, user: string, admission?: Admission): Promise<TickOutcome> {
  const log = deps.log.child({ user_id: user, run_id: deps.run.run_id });
  const head = await deps.hourly.head(user);
  if (head?.state === 'running' && head.walk_completed) {
    // A second phase whose dispatch was lost with the step that owed it (claimed once: never twice).
    const sent = await deps.hourly.dispatchReady(user, head.attempt_id, deps.now(), (section, stepId) =>
      deps.dispatch({ user_id: user, attempt_id: head.attempt_id, step_id: stepId, section }),
    );
    if (sent.length) {
      log.warn('sync_second_phase_dispatched', { attempt_id: head.attempt_id, sections: sent });
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
  let cost = admission?.hourlyCost ?? 0;
  if (admission) {
    // The visit holds an hourly sync's calls (visitAll); one that starts no attempt gives them back,
    // a first sync takes its real cost (or waits, its entry left due, for a later tick).
    const current = unchanged ? head : await deps.hourly.head(user);
    if (!startsAttempt(current, deps.now(), deps.hourly.hourMs)) admission.giveBack();
    else if (isFirstSync(current)) {
      const refused = admission.takeFirst();
      if (refused) {
        log.info('sync_attempt_deferred', { reason: refused });
        return refused;
      }
      cost = admission.policy?.firstCost ?? cost;
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
  const wait = admission ? admission.startAt(cost) - deps.now() : 0;
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
