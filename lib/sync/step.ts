import { redactValue, type Logger } from '../log';
import { emitMetrics } from '../metrics';
import { TimeoutError } from '../util/errors';
import { withTimeout } from '../util/timeout';
import type { SyncDataStore } from './data-store';
import { NoTokenError, StaleAttemptError } from './errors';
import { UnsafeKeyPartError } from './errors';
import { Section, SkippedAccount, StepReport, SyncErrorCode } from './model';
import { AddressLimits, SharedCallBudget } from './rate-budget';
import { dispatchedAt, newStepId } from './outcome';
import {
  DEFAULT_SECTION_SETTINGS,
  SECTION_RUNNERS,
  SectionContinues,
  SectionRunner,
  SectionSettings,
} from './sections';
import type { Clock } from '../clock';
import type { ConnectionService } from './connections';
import type { HourlyService } from './service';
import { TBankClient } from './tbank/client';
import { TBankError } from './tbank/errors';

/**
 * One step of an attempt: writes its `running` row, does its section within
 * its own bound (below the Lambda timeout), and writes its durable finish on
 * EVERY path. Start and finish are fenced by attempt_id. After finishing it
 * dispatches the sections that waited for it (the second phase), then settles
 * the attempt if the terminal barrier is reached.
 */

export interface StepInput {
  user_id: string;
  attempt_id: string;
  step_id: string;
  section: Section;
}

/** Sends one step on its way (an async invoke of the step function); its row is its report. */
export type Dispatch = (input: StepInput) => Promise<void>;

export interface StepDeps {
  hourly: HourlyService;
  /** Dispatches the attempt's second phase once this step's finish completes its dependencies. */
  dispatch: Dispatch;
  connections: ConnectionService;
  data: SyncDataStore;
  tbank: TBankSettings;
  timeoutMs: number;
  /** The real timer's bound (default timeoutMs): a bench on virtual time measures `timeoutMs` on its clock. */
  hardTimeoutMs?: number;
  settings?: SectionSettings;
  now: Clock;
  log: Logger;
  runners?: Record<Section, SectionRunner>;
}

export interface TBankSettings {
  baseUrl: string;
  appName: string;
  /** The rate limits' window (60 s; scaled down only where the emulator's is). */
  rateWindowMs: number;
  /** Our egress addresses: every call also takes a slot of their shared budget (rate-budget.ts). */
  egressAddresses?: number;
  /** The limits per address: limits.md's unless a test scales them with its window. */
  addressLimits?: AddressLimits;
  retries?: number;
  backoffMs?: number;
  rateLimitWaits?: number;
  /** The budget's clock and waits, and the step's remaining time: a bench's virtual time; the process's otherwise. */
  clock?: () => number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export type StepResult = 'succeeded' | 'failed' | 'stale' | 'duplicate' | 'continued';

/**
 * A continuing section (decision 326) starts no new work once this share of the step's bound has
 * passed: what is in flight then has the rest to finish and be written before the bound fires.
 */
export const HANDOVER_AT_SHARE = 0.6;

/** A step's finish is written this long before its wait bound at the latest (the write and the settle). */
export const FINISH_GUARD_MS = 1000;

/**
 * The step's own bound: SYNC_STEP_TIMEOUT_MS, but never past its wait bound (WORK_WAIT_BOUND_MS from
 * its dispatch, the instant in its id) less the finish guard. A bound past the wait let the attempt
 * stop waiting for a step that would still have finished, and hand over only after (decision 364).
 */
export function stepBoundMs(deps: Pick<StepDeps, 'timeoutMs' | 'hourly' | 'now'>, stepId: string): number {
  const now = deps.now();
  const waitLeft = dispatchedAt(stepId, now) + deps.hourly.waitBoundMs - now - FINISH_GUARD_MS;
  return Math.max(0, Math.min(deps.timeoutMs, waitLeft));
}

export async function runStep(deps: StepDeps, input: StepInput): Promise<StepResult> {
  const log = deps.log.child({
    attempt_id: input.attempt_id,
    step_id: input.step_id,
    section: input.section,
    user_id: input.user_id,
  });
  const row = { attempt_id: input.attempt_id, step_id: input.step_id, section: input.section };
  // Where a continuation resumes: written on the row by the step that handed the section over.
  let resume: Record<string, string> = {};
  try {
    const start = await deps.hourly.startStep(input.user_id, { ...row, state: 'running', started_at: deps.now() });
    if (start === 'exists') {
      log.info('sync_step_duplicate_delivery');
      return 'duplicate';
    }
    if (start === 'continued') {
      const rows = await deps.hourly.stepRows(input.attempt_id);
      resume = rows.find((r) => r.section === input.section && r.step_id === input.step_id)?.resume ?? {};
      log.info('sync_step_continues', { accounts: Object.keys(resume).length });
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
  let trackingId: string | undefined;
  const skipped: SkippedAccount[] = [];
  let api: TBankClient | undefined;
  let budget: SharedCallBudget | undefined;
  let handover: Record<string, string> | undefined;
  try {
    const token = await deps.connections.connectionToken(input.user_id);
    if (!token) throw new NoTokenError();
    // Opened from its seal for this step: no line of this invocation may print it (an error's message included).
    redactValue(token);
    const run = (deps.runners ?? SECTION_RUNNERS)[input.section];
    // Monotonic: the remaining time of the step's own bound, whatever the wall clock does.
    const elapsed = deps.tbank.clock ?? (() => performance.now());
    const started = elapsed();
    const boundMs = stepBoundMs(deps, input.step_id);
    const remainingMs = () => boundMs - (elapsed() - started);
    const stored = await withTimeout(deps.hardTimeoutMs ?? boundMs, `step ${input.section}`, (signal) => {
      budget = new SharedCallBudget({
        data: deps.data,
        user: input.user_id,
        windowMs: deps.tbank.rateWindowMs,
        egressAddresses: deps.tbank.egressAddresses,
        addressLimits: deps.tbank.addressLimits,
        clock: deps.tbank.clock,
        sleep: deps.tbank.sleep,
      });
      api = new TBankClient({ ...deps.tbank, token, signal, remainingMs, log, budget });
      const client = api;
      return run({
        api: client,
        skipped,
        data: deps.data,
        user: input.user_id,
        attempt_id: input.attempt_id,
        now: deps.now,
        log,
        settings: deps.settings ?? DEFAULT_SECTION_SETTINGS,
        handover: { resume, due: () => elapsed() - started >= boundMs * HANDOVER_AT_SHARE },
      }).then((n) => {
        log.info('sync_step_calls', { calls: client.calls, rate_limited: client.rateLimited });
        return n;
      });
    });
    log.info('sync_step_succeeded', { items: stored });
  } catch (err) {
    if (err instanceof SectionContinues) {
      handover = err.resume;
      log.info('sync_step_calls', { calls: api?.calls, rate_limited: api?.rateLimited });
    } else {
      // A StaleAttemptError here (a fenced write refused mid-section) falls through: the finish below is refused by the same fence.
      result = 'failed';
      code = errorCode(err);
      trackingId = err instanceof TBankError ? err.trackingId : undefined;
      log.warn('sync_step_failed', { error_code: code, tracking_id: trackingId, err });
    }
  }

  stepMetrics(input, api, budget);
  if (handover) {
    const handed = await handOver(deps, input, handover, log);
    if (handed === 'continued' || handed === 'stale') return handed;
    result = 'failed';
    code = handed === 'no-time' ? SyncErrorCode.DEADLINE : SyncErrorCode.INTERNAL;
  }
  const report = stepReport(api, skipped);
  if (report.unknown_values)
    log.warn('sync_unknown_enum_values', { count: report.unknown_values, names: report.unknown_names });
  try {
    await deps.hourly.finishStep(input.user_id, row, result, deps.now(), code, trackingId, report);
  } catch (err) {
    // A successor attempt exists: this late row is refused by the fence, by design.
    if (err instanceof StaleAttemptError) {
      log.warn('sync_step_finish_stale');
      return 'stale';
    }
    throw err;
  }

  try {
    const sent = await deps.hourly.dispatchReady(input.user_id, input.attempt_id, deps.now(), (section, stepId) =>
      deps.dispatch({ user_id: input.user_id, attempt_id: input.attempt_id, step_id: stepId, section }),
    );
    if (sent.length) log.info('sync_second_phase_dispatched', { sections: sent });
  } catch (err) {
    // Claimed but not sent: no row comes, and the attempt settles the section as DISPATCH_FAILED.
    log.error('sync_second_phase_dispatch_failed', { err });
  }

  try {
    await deps.hourly.settleHourly(input.user_id, input.attempt_id, deps.now());
  } catch (err) {
    log.error('sync_settle_failed', { err }); // the next tick's recovery settles it
  }
  return result;
}

/**
 * Hands the section over to a continuation step: ONE fenced write moves the attempt's child and the
 * row to the new step id with the resume point, then the step is sent. 'no-time' when the
 * continuation could not end within the attempt's wait bound (the section finishes DEADLINE),
 * 'failed' when the write failed (INTERNAL).
 */
async function handOver(
  deps: StepDeps,
  input: StepInput,
  resume: Record<string, string>,
  log: Logger,
): Promise<'continued' | 'stale' | 'no-time' | 'failed'> {
  const next = { ...input, step_id: newStepId(deps.now()) };
  try {
    const row = { attempt_id: input.attempt_id, step_id: input.step_id, section: input.section };
    if (
      !(await deps.hourly.continueStep(
        input.user_id,
        row,
        { step_id: next.step_id, resume },
        deps.now(),
        Math.min(deps.timeoutMs, deps.hourly.waitBoundMs),
      ))
    )
      return 'no-time';
  } catch (err) {
    if (err instanceof StaleAttemptError) {
      log.warn('sync_step_handover_stale');
      return 'stale';
    }
    // Not handed over: the step finishes its row failed, so the attempt does not wait for a step that never comes.
    log.error('sync_step_handover_failed', { err });
    return 'failed';
  }
  log.info('sync_step_handed_over', { next_step_id: next.step_id, accounts: Object.keys(resume).length });
  try {
    await deps.dispatch(next);
  } catch (err) {
    // Handed over but not sent: the row stays `running` and the section's wait bound settles it (DEADLINE).
    log.error('sync_step_continuation_dispatch_failed', { err });
  }
  return 'continued';
}

/** What the step met on the way: T-Bank's 429s, and its waits for a budget's window, by budget. */
function stepMetrics(input: StepInput, api: TBankClient | undefined, budget: SharedCallBudget | undefined): void {
  if (!api) return; // no call was made (no token)
  const ids = { user_id: input.user_id, attempt_id: input.attempt_id, step_id: input.step_id, section: input.section };
  emitMetrics({ TbankRateLimited: api.rateLimited }, {}, ids);
  for (const [name, ms] of Object.entries(budget?.waitedMs ?? {}))
    emitMetrics({ TbankBudgetWait: ms }, { budget: name }, ids);
}

/** What the row says besides state and code: unknown enum values kept raw, accounts skipped. */
function stepReport(api: TBankClient | undefined, skipped: SkippedAccount[]): StepReport {
  const report: StepReport = {};
  const unknown = [...(api?.unknownValues ?? new Map<string, number>())];
  if (unknown.length) {
    report.unknown_values = unknown.reduce((n, [, count]) => n + count, 0);
    report.unknown_names = unknown.map(([name]) => name.slice(0, 160)).slice(0, 10);
  }
  if (skipped.length) report.skipped_accounts = skipped;
  return report;
}

function errorCode(err: unknown): string {
  if (err instanceof TimeoutError) return SyncErrorCode.STEP_TIMEOUT;
  if (err instanceof StaleAttemptError) return err.code;
  if (err instanceof TBankError) return err.code;
  if (err instanceof NoTokenError) return SyncErrorCode.ACCESS_DENIED;
  if (err instanceof UnsafeKeyPartError) return SyncErrorCode.BAD_UPSTREAM_ANSWER;
  return SyncErrorCode.INTERNAL;
}
