import type { Logger } from '../log';
import { TimeoutError, withTimeout } from '../util/timeout';
import { BrokerageClient, BrokerageError } from './brokerage';
import { Section, SyncErrorCode } from './model';
import { SECTION_RUNNERS, SectionRunner } from './sections';
import { StaleAttemptError, SyncStore } from './store';

/**
 * One step of an attempt: writes its `running` row, does its section within
 * its own bound (below the Lambda timeout), and writes its durable finish on
 * EVERY path. Start and finish are fenced by attempt_id. After finishing it
 * settles the attempt if the terminal barrier is reached.
 */

export interface StepInput {
  user_id: string;
  attempt_id: string;
  step_id: string;
  section: Section;
}

export interface StepDeps {
  store: SyncStore;
  brokerageUrl: string;
  timeoutMs: number;
  now: () => number;
  log: Logger;
  runners?: Record<Section, SectionRunner>;
}

export type StepResult = 'succeeded' | 'failed' | 'stale' | 'duplicate';

export async function runStep(deps: StepDeps, input: StepInput): Promise<StepResult> {
  const log = deps.log.child({ attempt_id: input.attempt_id, step_id: input.step_id, section: input.section, user_id: input.user_id });
  const row = { attempt_id: input.attempt_id, step_id: input.step_id, section: input.section };
  try {
    if ((await deps.store.startStep(input.user_id, { ...row, state: 'running', started_at: deps.now() })) === 'exists') {
      log.info('sync_step_duplicate_delivery');
      return 'duplicate';
    }
  } catch (err) {
    if (err instanceof StaleAttemptError) {
      log.warn('sync_step_stale', { err });
      return 'stale';
    }
    throw err;
  }

  let result: 'succeeded' | 'failed' = 'succeeded';
  let code: string | undefined;
  try {
    const token = await deps.store.connectionToken(input.user_id);
    if (!token) throw new BrokerageError(401, 'no connection token');
    const run = (deps.runners ?? SECTION_RUNNERS)[input.section];
    const stored = await withTimeout(deps.timeoutMs, `step ${input.section}`, (signal) =>
      run(new BrokerageClient(deps.brokerageUrl, token, signal), deps.store, input.user_id),
    );
    log.info('sync_step_succeeded', { items: stored });
  } catch (err) {
    result = 'failed';
    code = errorCode(err);
    log.warn('sync_step_failed', { error_code: code, err });
  }

  try {
    await deps.store.finishStep(input.user_id, row, result, deps.now(), code);
  } catch (err) {
    // A successor attempt exists: this late row is refused by the fence, by design.
    if (err instanceof StaleAttemptError) {
      log.warn('sync_step_finish_stale');
      return 'stale';
    }
    throw err;
  }

  try {
    await deps.store.settleHourly(input.user_id, input.attempt_id, deps.now());
  } catch (err) {
    log.error('sync_settle_failed', { err }); // the next tick's recovery settles it
  }
  return result;
}

function errorCode(err: unknown): string {
  if (err instanceof TimeoutError) return SyncErrorCode.STEP_TIMEOUT;
  if (err instanceof BrokerageError) return err.status === 401 || err.status === 403 ? SyncErrorCode.UNAUTHORIZED : SyncErrorCode.UPSTREAM_ERROR;
  return SyncErrorCode.INTERNAL;
}
