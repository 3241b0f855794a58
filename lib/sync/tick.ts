import { newId } from '../ident';
import type { Logger } from '../log';
import { MANDATORY_SECTIONS, SyncErrorCode } from './model';
import type { StepInput } from './step';
import type { Reservation, Run, SyncStore } from './dynamodb-store';

/**
 * The minute tick (lib/sync/README.md): for each connection, recovery, then
 * reserveHourly, then the walk of a reserved attempt: access.local, then one
 * async step per mandatory section, each step id written onto the attempt
 * right after its dispatch. The tick never waits for steps: the last step to
 * finish, or a later tick, settles at the terminal barrier.
 */

export type Dispatch = (input: StepInput) => Promise<void>;

export interface TickDeps {
  store: SyncStore;
  dispatch: Dispatch;
  now: () => number;
  log: Logger;
  run: Run;
}

export type TickOutcome = Reservation['branch'] | 'failed';

/** Users are independent (each guarded by its own conditional writes): work on a few at once. */
export const TICK_CONCURRENCY = 8;
/** Stop taking new users this close to the run's hard end; the next tick takes them. */
export const TICK_MARGIN_MS = 5_000;

export async function tick(deps: TickDeps): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const count = (outcome: string) => (counts[outcome] = (counts[outcome] ?? 0) + 1);
  const users = deps.store.connections();
  const worker = async () => {
    for (;;) {
      if (deps.now() > deps.run.run_deadline - TICK_MARGIN_MS) return;
      const next = await users.next();
      if (next.done) return;
      try {
        count(await tickUser(deps, next.value.user_id));
      } catch (err) {
        deps.log.error('sync_tick_user_failed', { user_id: next.value.user_id, err });
        count('failed');
      }
    }
  };
  await Promise.all(Array.from({ length: TICK_CONCURRENCY }, worker));
  deps.log.info('sync_tick_done', { run_id: deps.run.run_id, ...counts });
  return counts;
}

/** A step settles right after its finish; rows all finished this long ago mean that settle failed. */
export const SETTLE_GRACE_MS = 60_000;

/**
 * Recovery on the tick, for a walked attempt still running: past the wait
 * bound it is settled as it stands (DEADLINE for late steps); when every step
 * finished long ago, the settle that should have followed failed: close it
 * INTERRUPTED (at most partial). A run that died mid-walk is reserveHourly's
 * `restart` branch.
 */
async function recover(deps: TickDeps, user: string, log: Logger): Promise<void> {
  const head = await deps.store.head(user);
  if (head?.state !== 'running' || !head.walk_completed) return;
  const now = deps.now();
  const result = await deps.store.settleHourly(user, head.attempt_id, now, {
    lostIfFinishedBefore: now - SETTLE_GRACE_MS,
  });
  if ('settled' in result)
    log.warn('sync_attempt_recovered', {
      attempt_id: head.attempt_id,
      outcome: result.settled.state,
      error_code: result.settled.error_code,
    });
}

export async function tickUser(deps: TickDeps, user: string): Promise<TickOutcome> {
  const log = deps.log.child({ user_id: user, run_id: deps.run.run_id });
  await recover(deps, user, log);

  const reservation = await deps.store.reserveHourly(user, deps.now(), deps.run);
  if (reservation.branch === 'restart') log.warn('sync_attempt_interrupted', { outcome: reservation.closed.state });
  if (!('head' in reservation) || !reservation.head) return reservation.branch;

  const attempt = reservation.head.attempt_id;
  log.info('sync_attempt_reserved', { attempt_id: attempt, branch: reservation.branch });
  if (!(await deps.store.connectionToken(user))) {
    // access.local: without a token no section can run.
    await deps.store.markWalkCompleted(user, attempt);
    await deps.store.settleHourly(user, attempt, deps.now(), { cause: SyncErrorCode.ACCESS_DENIED });
    return reservation.branch;
  }
  for (const section of MANDATORY_SECTIONS) {
    const step: StepInput = { user_id: user, attempt_id: attempt, step_id: newId(deps.now()), section };
    try {
      await deps.dispatch(step);
    } catch (err) {
      // No durable row will exist: settle reports the section as DISPATCH_FAILED.
      log.error('sync_dispatch_failed', { attempt_id: attempt, section, err });
      continue;
    }
    await deps.store.recordDispatch(user, attempt, section, step.step_id);
  }
  await deps.store.markWalkCompleted(user, attempt);
  await deps.store.settleHourly(user, attempt, deps.now());
  return reservation.branch;
}
